import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisStore } from '../../src-relay/store/redis-store.ts';
import {
  REPORTS_REMEMBERED_CHARS,
  REPORTS_REMEMBERED_PER_CALL,
  YeastarIntake,
} from '../../src-relay/yeastar-intake.ts';
import { ringGroupCall, SN } from '../../rigs/yeastar-ring-group.ts';
import { systemClock } from '../../src-shared/process/clock.ts';
import { silentLogger } from '../../src-shared/process/log.ts';
import { redisAvailable, startRedis, type RedisProcess } from '../../rigs/relay/helpers.ts';

const dir = new URL('../fixtures/yeastar-p-series/', import.meta.url);
const fixture = (name: string) => readFileSync(new URL(name, dir));
const sequences = JSON.parse(readFileSync(new URL('captured-sequences.json', dir), 'utf8')) as {
  order_of_arrival: Record<string, string[]>;
};

/** The call reports of every captured sequence (member-style: one member a report, as a PBX sends). */
const calls = Object.entries(sequences.order_of_arrival).map(
  ([name, files]) => [name, files.filter((f) => /30011|30012|30015/.test(f))] as const,
);

/** What desktops get: the envelopes, once each (the store dedupes by event_id), as to/state. */
async function feed(intakes: YeastarIntake[], files: readonly string[]): Promise<string[]> {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const [i, f] of files.entries()) {
    const r = await intakes[i % intakes.length]!.receive('pbx', fixture(f), 1_700_000_000_000 + i);
    if (!r.ok) throw new Error(`${f}: ${r.reason}`);
    r.delivered?.();
    for (const e of r.events) {
      if (seen.has(e.eventId)) continue;
      seen.add(e.eventId);
      const data = (JSON.parse(e.body) as { data: { to: string; state: string } }).data;
      out.push(`${data.to}:${data.state}`);
    }
  }
  return out;
}

describe.skipIf(!redisAvailable(import.meta.filename))(
  'one Yeastar call memory per tenant on Redis',
  () => {
    let redis: RedisProcess;
    const stores: RedisStore[] = [];
    beforeAll(async () => {
      redis = await startRedis();
    });
    afterAll(async () => {
      for (const s of stores) await s.close();
      await redis?.stop();
    });
    let n = 0;
    const store = async (prefix: string) => {
      const s = new RedisStore({
        url: redis.url,
        keyPrefix: prefix,
        tenants: ['pbx'],
        clock: systemClock,
        logger: silentLogger,
        blockMs: 500,
      });
      stores.push(s);
      await s.open();
      return s;
    };

    it.each(calls)('%s: two instances decide as one', async (_name, files) => {
      let t = 0;
      const clock = () => (t += 10);
      const one = await feed([new YeastarIntake(clock)], files);
      const prefix = `cm${(n += 1)}:`;
      const a = await store(prefix);
      const b = await store(prefix);
      const shared = await feed(
        [new YeastarIntake(clock, a.callMemory), new YeastarIntake(clock, b.callMemory)],
        files,
      );
      // Each instance with its own memory (the code before): what the README's rule guarded against.
      const apart = await feed([new YeastarIntake(clock), new YeastarIntake(clock)], files);
      expect(shared).toEqual(one);
      // Sequence A, member-style: one pop and one dismiss. Apart (the code before this memory), the
      // second instance, which never saw the ring, ended it again: ['700:ringing', '700:ended',
      // '700:ended'] (a second dismiss with a different event id).
      if (_name.startsWith('A-')) {
        expect(one).toEqual(['700:ringing', '700:ended']);
        expect(apart).toEqual(['700:ringing', '700:ended', '700:ended']);
      }
    });
    it("a report retried after the call's later reports (its append failed) gets its first decode's events", async () => {
      const prefix = 'cmretry:';
      const a = await store(prefix);
      const b = await store(prefix);
      let t = 0;
      const clock = () => (t += 10);
      const intakes = [
        new YeastarIntake(clock, a.callMemory),
        new YeastarIntake(clock, b.callMemory),
      ];
      const reports = ringGroupCall('1700000004.41');
      const ids = async (i: number, at: number) => {
        const r = await intakes[at % 2]!.receive(
          'pbx',
          Buffer.from(reports[i]!),
          1_700_000_000_000 + i,
        );
        if (!r.ok) throw new Error(r.reason);
        return r.events.map((e) => e.eventId);
      };
      // Each report again on the other instance right after the next one was decoded: a webhook
      // answered 503 (its append failed) and retried by the PBX.
      const first: string[][] = [];
      const again: string[][] = [];
      for (const i of reports.keys()) {
        first.push(await ids(i, i));
        if (i > 0) again.push(await ids(i - 1, i));
      }
      again.push(await ids(reports.length - 1, reports.length));
      const process = new YeastarIntake(clock);
      const one = new Set(
        reports.flatMap((r, i) => {
          const d = process.decode('pbx', Buffer.from(r), 1_700_000_000_000 + i);
          return d.ok ? d.events.map((e) => e.eventId) : [];
        }),
      );
      const differ = again.filter((x, i) => JSON.stringify(x) !== JSON.stringify(first[i]));
      console.log(
        `reports retried after the next one: ${differ.length} of ${reports.length} decoded to other events; ${new Set([...first.flat(), ...again.flat()]).size} event ids stored, one process ${one.size}`,
      );
      const { memory } = await a.callMemory.read('pbx', '1700000004.41');
      const call = (JSON.parse(memory!) as { call: string }).call;
      console.log(
        `the ended call's memory: ${memory!.length} characters, the decoder's ${call.length}`,
      );
      expect(first.flat().length).toBeGreaterThan(6);
      expect(new Set([...first.flat(), ...again.flat()])).toEqual(one);
      expect(again).toEqual(first);
      expect(again).toEqual(first);
    });

    it('keeps the events of a call’s newest reports only, and still reads a memory written without them', async () => {
      const s = await store('cmbound:');
      let t = 0;
      const intake = new YeastarIntake(() => (t += 10), s.callMemory);
      const callId = '1700000004.42';
      const ring = (n: number) =>
        JSON.stringify({
          type: 30011,
          sn: SN,
          msg: JSON.stringify({
            call_id: callId,
            members: [
              {
                extension: {
                  number: String(200 + n),
                  channel_id: `PJSIP/${200 + n}-000000${n}`,
                  member_status: 'RING',
                  call_path: '6300',
                },
              },
            ],
          }),
        });
      const reports = Array.from({ length: 2 * REPORTS_REMEMBERED_PER_CALL }, (_, n) => ring(n));
      const first: string[][] = [];
      for (const [i, r] of reports.entries()) {
        const got = await intake.receive('pbx', Buffer.from(r), 1_700_000_000_000 + i);
        if (!got.ok) throw new Error(got.reason);
        first.push(got.events.map((e) => e.eventId));
      }
      const { memory } = await s.callMemory.read('pbx', callId);
      const kept = (
        JSON.parse(memory!) as { reports: [string, { body: string; eventId: string }[]][] }
      ).reports;
      const chars = kept
        .flat(2)
        .reduce((n, e) => n + (typeof e === 'string' ? 0 : e.body.length + e.eventId.length), 0);
      console.log(
        `a call of ${reports.length} reports: the events of ${kept.length} kept, ${chars} characters, memory ${memory!.length}`,
      );
      expect(kept.length).toBeLessThanOrEqual(REPORTS_REMEMBERED_PER_CALL);
      expect(kept.length).toBeGreaterThan(1);
      expect(chars).toBeLessThanOrEqual(REPORTS_REMEMBERED_CHARS);
      // The newest kept report, retried, gets the same events.
      const last = reports.length - 1;
      const retried = await intake.receive('pbx', Buffer.from(reports[last]!), 1);
      expect(retried.ok && retried.events.map((e) => e.eventId)).toEqual(first[last]);

      // A memory written by a relay before the reports were kept (the decoder's text alone) reads as
      // that call: the call's next report decodes as one process.
      const legacy = JSON.parse(memory!) as { call: string };
      const { version } = await s.callMemory.read('pbx', callId);
      expect(await s.callMemory.write('pbx', callId, version, legacy.call, 60_000)).toBe(true);
      const one = new YeastarIntake(() => (t += 10));
      for (const [i, r] of reports.entries())
        one.decode('pbx', Buffer.from(r), 1_700_000_000_000 + i);
      const hangUp = JSON.stringify({
        type: 30011,
        sn: SN,
        msg: JSON.stringify({
          call_id: callId,
          members: [
            {
              extension: {
                number: '200',
                channel_id: 'PJSIP/200-0000000',
                member_status: 'BYE',
                call_path: '6300',
              },
            },
          ],
        }),
      });
      const expected = one.decode('pbx', Buffer.from(hangUp), 2);
      const got = await intake.receive('pbx', Buffer.from(hangUp), 2);
      expect(got.ok && got.events.map((e) => e.eventId)).toEqual(
        expected.ok && expected.events.map((e) => e.eventId),
      );
      expect(got.ok && got.events.length).toBeGreaterThan(0);
    });

    it('a Redis fault rejects the report (the webhook answers 503, the PBX retries)', async () => {
      const s = await store('cmfault:');
      const intake = new YeastarIntake(() => 1, s.callMemory);
      await s.close();
      await expect(
        intake.receive('pbx', fixture('captured-30011-A3-ext-ring-with-inbound-alert.json'), 1),
      ).rejects.toThrow();
    });
  },
);
