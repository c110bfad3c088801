import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisStore } from '../../src-relay/store/redis-store.ts';
import { YeastarIntake } from '../../src-relay/yeastar-intake.ts';
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
