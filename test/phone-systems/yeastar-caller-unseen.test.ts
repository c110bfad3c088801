/**
 * Issue 32 item 6: a trunk without Call Status Monitor sends an outside call's ring with no
 * inbound member, so no caller (doc section 6, set-up checks). The decoder marks a ring in a call
 * where no calling party was ever reported (`caller_unseen`), the pipeline carries it to the pop,
 * and the runner's pop line says so with the remedy in its language. Every captured call (real
 * PBX traffic: the caller in the report before the ring or in the same one; an internal call's
 * caller in ALERT) never raises it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EventPipeline, type Pop } from '../../src-main/core/events/pipeline.ts';
import { popLine } from '../../src-main/headless/output.ts';
import { createTranslator } from '../../src-shared/i18n/translator.ts';
import { YeastarEventDecoder } from '../../src-shared/phone-systems/yeastar-p-series.ts';
import { YEASTAR_P_SERIES_WIRE } from '../../src-shared/wire/yeastar-p-series.ts';
import type { EventEnvelope } from '../../src-shared/wire/event-codes.ts';
import { FakeClock } from '../../rigs/fake-clock.ts';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'yeastar-p-series');
const fixture = (name: string) => readFileSync(join(FIXTURES, name), 'utf8');
const T0 = Date.UTC(2026, 10, 28, 9, 0, 0);
const report = (callId: string, members: object[]) =>
  JSON.stringify({ type: 30011, sn: 'SN1', msg: JSON.stringify({ call_id: callId, members }) });
const ext = (number: string, status: string, channel = `PJSIP/${number}-01`) => ({
  extension: { number, channel_id: channel, member_status: status, call_path: '' },
});
const inbound = (status: string, from = '+4930123456') => ({
  inbound: {
    from,
    to: '5503301',
    trunk_name: 'peering',
    channel_id: 'PJSIP/t-01',
    member_status: status,
  },
});

function decodeAll(d: YeastarEventDecoder, frames: string[]): EventEnvelope[] {
  return frames.flatMap((text, i) => {
    const r = d.decode(text, T0 + i, i);
    return r.ok ? r.envelopes : [];
  });
}
const unseen = (envelopes: EventEnvelope[]) =>
  envelopes.filter((e) => e.data.caller_unseen !== undefined).map((e) => [e.data.to, e.data.state]);

describe('Yeastar: a ring whose caller the PBX never reported', () => {
  it('every captured call, in the order it arrived, never raises it', () => {
    const order = (
      JSON.parse(fixture('captured-sequences.json')) as {
        order_of_arrival: Record<string, string[]>;
      }
    ).order_of_arrival;
    const rings: unknown[] = [];
    for (const [name, frames] of Object.entries(order)) {
      const envelopes = decodeAll(new YeastarEventDecoder(), frames.map(fixture));
      rings.push(...envelopes.filter((e) => e.data.state === 'ringing'));
      expect(unseen(envelopes), name).toEqual([]);
    }
    expect(rings.length).toBeGreaterThan(0); // the captures do ring
  });

  it('a caller in an earlier report, in the same report (listed after the ring), or calling from an extension: not raised', () => {
    const d = new YeastarEventDecoder();
    const envelopes = decodeAll(d, [
      report('a', [inbound('ALERT')]),
      report('a', [ext('101', 'RING')]),
      report('b', [ext('101', 'RING'), inbound('ALERT')]),
      report('c', [ext('102', 'ALERT')]),
      report('c', [ext('101', 'RING')]),
      // A withheld number: the inbound member came, with no `from`; the PBX did report the call.
      report('d', [inbound('ALERT', '')]),
      report('d', [ext('101', 'RING')]),
    ]);
    expect(envelopes.filter((e) => e.data.state === 'ringing')).toHaveLength(4);
    expect(unseen(envelopes)).toEqual([]);
  });

  it('an extension rung with no calling party ever reported: raised on the ring only, and the runner says the remedy', () => {
    const clock = new FakeClock();
    const pipeline = new EventPipeline({
      clock,
      user: { extensions: ['101'], dids: [], defaultRegion: 'DE' },
    });
    const pops: Pop[] = [];
    pipeline.onPop((p) => pops.push(p));
    const decode = YEASTAR_P_SERIES_WIRE.stream.decoder();
    const d = new YeastarEventDecoder();
    const frames = [report('x', [ext('101', 'RING')]), report('x', [ext('101', 'BYE')])];
    expect(unseen(decodeAll(d, frames))).toEqual([['101', 'ringing']]);
    pipeline.ingest(frames[0]!, { source: 'direct', receivedAt: clock.now() }, decode);
    expect(pops).toMatchObject([{ to: '101', from: '', callerUnseen: true }]);
    const line = popLine(pops[0]!, null);
    expect(line).toMatchObject({ caller_unseen: true });
    expect(line.hint).toContain('Call Status Monitor');
    expect(line.hint).toContain('did not say who is calling');
    const de = popLine(pops[0]!, null, { t: createTranslator('de', { isolate: false }) });
    expect(de.hint).toContain('Call Status Monitor');
    expect(de.hint).toContain('Amtsleitung');
  });
});
