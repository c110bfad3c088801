/**
 * `npm run bench:yeastar-memory`: the heap a Yeastar P-Series decoder holds at its bounds
 * (src-shared/phone-systems/yeastar-p-series.ts, doc docs/phone-systems/yeastar-p-series.md
 * section 5 rule 6), measured as the heap in use after two full collections, before and after
 * feeding it calls:
 *
 * - typical: an outside caller, three extensions of a ring group ringing, one answering, everyone
 *   hanging up, one member a report (as the captures show); `live` stops before the hang-ups;
 * - worst live: every call one snapshot of 64 extensions ringing, every field (call id, number,
 *   channel, call_path, caller, line) 256 characters, never ended;
 * - worst ended: the same calls, then failed as a whole (30015, members null), which ends all 64
 *   rings at once: each tombstone keeps the 64 envelopes of that last report;
 * - worst both: half of each; `2B` with text that is not Latin-1 (two bytes a character in V8).
 *
 * BENCH_DECODER=path decodes with another copy of the decoder (to measure an older version);
 * BENCH_CALLS sets the worst cases' calls (default 3,000: more than both budgets hold).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

type Decoder = {
  decode(text: string, receivedAt: number, now: number): unknown;
  callsRemembered: number;
  heldBytes?: number;
};
const modulePath = process.env.BENCH_DECODER
  ? pathToFileURL(resolve(process.env.BENCH_DECODER)).href
  : '../src-shared/phone-systems/yeastar-p-series.ts';
const { YeastarEventDecoder } = (await import(modulePath)) as {
  YeastarEventDecoder: new (o?: object) => Decoder;
};
const WORST_CALLS = Number(process.env.BENCH_CALLS ?? 3_000);
const TYPICAL_CALLS = Number(process.env.BENCH_TYPICAL_CALLS ?? 2_000);

function heapUsed(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}
const KiB = (b: number) => Math.round((b / 1024) * 10) / 10;
const MiB = (b: number) => Math.round((b / 1048576) * 10) / 10;

const frame = (type: number, msg: object) => JSON.stringify({ type, sn: 'SN0001', msg });
const ext = (number: string, status: string, channel: string, path = '') => ({
  extension: { number, channel_id: channel, member_status: status, call_path: path },
});
const inbound = (from: string, to: string, status: string, channel: string) => ({
  inbound: { from, to, trunk_name: 'trunk', channel_id: channel, member_status: status },
});
let filler = 'x';
const pad = (s: string, n = 256) => (s + filler.repeat(n)).slice(0, n);

function typical(d: Decoder, i: number, t: number, end: boolean): void {
  const id = `1702285525.${i}`;
  const say = (m: object) => d.decode(frame(30011, { call_id: id, members: [m] }), t, t);
  say(inbound('+4930123456', '0301234500', 'ALERT', `PJSIP/trunk-${i}`));
  for (const n of ['101', '102', '103']) say(ext(n, 'RING', `PJSIP/${n}-${i}`, '6400'));
  say(ext('102', 'ANSWER', `PJSIP/102-${i}`, '6400'));
  if (!end) return;
  say(inbound('+4930123456', '0301234500', 'BYE', `PJSIP/trunk-${i}`));
  for (const n of ['101', '102', '103']) say(ext(n, 'BYE', `PJSIP/${n}-${i}`, '6400'));
}

function worst(d: Decoder, i: number, t: number, end: boolean): void {
  const id = pad(`call-${i}-`);
  const members: object[] = [inbound(pad(`+49${i}`), pad('line'), 'ALERT', pad(`trunk-${i}-`))];
  for (let k = 0; k < 63; k++)
    members.push(ext(pad(`${k}-`), 'RING', pad(`chan-${i}-${k}-`), pad(`path-${k}-`)));
  d.decode(frame(30011, { call_id: id, members }), t, t);
  if (end) d.decode(frame(30015, { call_id: id, reason: '404 NOT found', members: null }), t, t);
}

function measure(name: string, calls: number, feed: (d: Decoder, i: number, t: number) => void) {
  const base = heapUsed();
  const d: Decoder = new YeastarEventDecoder();
  for (let i = 0; i < calls; i++) feed(d, i, 1_000 + i);
  const bytes = heapUsed() - base;
  const row = {
    name,
    calls,
    held: d.callsRemembered,
    heldBytes: d.heldBytes,
    heapMiB: MiB(bytes),
    perCallKiB: KiB(bytes / Math.max(1, d.callsRemembered)),
  };
  return row;
}

const rows = [
  measure('typical live', TYPICAL_CALLS, (d, i, t) => typical(d, i, t, false)),
  measure('typical ended', TYPICAL_CALLS, (d, i, t) => typical(d, i, t, true)),
  measure('worst live', WORST_CALLS, (d, i, t) => worst(d, i, t, false)),
  measure('worst ended', WORST_CALLS, (d, i, t) => worst(d, i, t, true)),
  measure('worst both', WORST_CALLS, (d, i, t) => worst(d, i, t, i % 2 === 0)),
];
filler = '\u6c49'; // text V8 holds two bytes a character
rows.push(measure('worst both 2B', WORST_CALLS, (d, i, t) => worst(d, i, t, i % 2 === 0)));
for (const r of rows)
  console.log(
    `${r.name.padEnd(14)} calls fed ${String(r.calls).padStart(6)}  held ${String(r.held).padStart(6)}  ` +
      `heap ${String(r.heapMiB).padStart(7)} MiB  per call held ${String(r.perCallKiB).padStart(6)} KiB` +
      (r.heldBytes !== undefined ? `  heldBytes ${MiB(r.heldBytes)} MiB` : ''),
  );
