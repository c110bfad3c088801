/**
 * Black box: the built relay (`node dist-relay/screenpop-relay.cjs`) as a process. SIGTERM drains and closes the store before the
 * process ends: with the memory store and a snapshot file, an acknowledged webhook is in the
 * snapshot (src-relay/README.md: "Nothing acknowledged is lost ... with the memory store and a
 * snapshotFile"). The shutdown's waits once were unref'd timers, and the process ended inside them,
 * before the snapshot was written.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { signBody } from '../../src-sim/webhook-signature.ts';
import { ProcessGroup } from '../../rigs/processes.ts';
import { RelayProcess } from './services.ts';

let group: ProcessGroup;
afterEach(async () => {
  await group?.cleanup();
});

describe('relay process', () => {
  it('writes its memory snapshot on SIGTERM, with every acknowledged webhook, and exits 0', async () => {
    group = new ProcessGroup();
    const snapshotFile = join(group.tempDir('blackbox-snapshot-'), 'snapshot.json');
    const relay = await new RelayProcess(group, {
      tenant: 'acme',
      serviceUrl: 'http://127.0.0.1:9',
      snapshotFile,
    }).start();
    const body = JSON.stringify({
      event: 30011,
      timestamp: Date.now(),
      tenant: 'acme',
      data: { call_id: 'c-snap', from: '+14155550123', to: '101', state: 'ringing' },
      event_id: 'evt-snapshot-1',
    });
    const res = await fetch(relay.webhookUrl(), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'X-Service-Signature': signBody(relay.webhookSecret, body),
      },
      body,
    });
    expect(res.status).toBe(200);
    relay.proc.signal('SIGTERM');
    expect(await relay.proc.exit).toEqual({ code: 0, signal: null });
    expect(readFileSync(snapshotFile, 'utf8')).toContain('evt-snapshot-1');
  });
});
