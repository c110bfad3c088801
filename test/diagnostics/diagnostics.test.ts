import { execFileSync } from 'node:child_process';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { LogRing, StatusTimeline } from '../../src-main/core/diagnostics/bounded-log.ts';
import {
  Diagnostics,
  logSection,
  maskNumbers,
  redactForSupport,
} from '../../src-main/core/diagnostics/diagnostics.ts';
import {
  aboutSection,
  connectionSection,
  connectionTestSection,
  keychainState,
  policySection,
  settingsSection,
} from '../../src-main/core/diagnostics/sections.ts';
import { createLogger, SecretRegistry } from '../../src-shared/process/log.ts';
import { validatePolicy } from '../../src-main/core/settings/policy.ts';
import { DEFAULT_SETTINGS } from '../../src-main/core/settings/types.ts';
import { useTempDir } from '../support/temp-dir.ts';

const tmp = useTempDir('screenpop-diag-');

const SECRET = 'sk_live_Planted-API-Secret-9f3a';
const ACCESS = 'at.Planted-Access-Token.77c1';
const REFRESH = 'rt.Planted-Refresh-Token.51d0';
const CALLER = '+14155550123';
const NOW = Date.UTC(2026, 10, 23, 10, 0, 0);

/** Every file of the archive as `tar` itself unpacks it. */
async function unpack(archive: string): Promise<Map<string, string>> {
  const dir = join(tmp.path, 'unpacked');
  await mkdir(dir, { recursive: true });
  execFileSync('tar', ['-xzf', archive, '-C', dir]);
  const files = new Map<string, string>();
  for (const name of await readdir(join(dir, 'screenpop-diagnostics')))
    files.set(name, await readFile(join(dir, 'screenpop-diagnostics', name), 'utf8'));
  return files;
}

describe('diagnostics archive', () => {
  it('holds every section and none of the planted secrets, tokens or caller numbers', async () => {
    const secrets = new SecretRegistry();
    const ring = new LogRing(50);
    const logger = createLogger({ sink: ring.tee(() => {}), secrets, now: () => NOW });
    // Logged before the tokens were known to the registry: only the archive can scrub them.
    logger.info(`call ringing from ${CALLER}`, { from: CALLER, note: `got ${ACCESS}` });
    logger.warn('refresh failed', { body: `refresh_token=${REFRESH}`, detail: SECRET });
    secrets.add(SECRET);
    secrets.add(ACCESS);
    secrets.add(REFRESH);
    logger.info('token', { accessToken: ACCESS, message: `Bearer ${ACCESS}` });

    const timeline = new StatusTimeline();
    timeline.record(NOW - 5000, { state: 'connecting', reason: 'Connecting…' });
    timeline.record(NOW - 4000, {
      state: 'needs-attention',
      reason: `call from ${CALLER} failed with ${REFRESH}`,
    });
    const settings = {
      ...DEFAULT_SETTINGS,
      baseUrl: 'https://acme.example.com',
      apiKey: 'ak_acme',
      dids: ['+1 (415) 555-0123'],
      contactsFile: `/home/me/${SECRET}.csv`,
      relayUrl: 'wss://relay.acme.example.com',
    };
    const { policy } = validatePolicy(
      {
        managedBy: 'Acme IT',
        settings: { crmUrlTemplate: `https://crm.example.com/?k=${ACCESS}&n={from}` },
        onRing: [{ run: '/usr/bin/logger', args: ['--tag', REFRESH, '{from}'] }],
      },
      '/etc/screenpop/policy.json',
    );
    const d = new Diagnostics();
    d.add(aboutSection({ app: 'Screenpop', version: '1.2.3', now: () => NOW }));
    d.add(
      settingsSection(
        () => settings,
        () => keychainState(true),
      ),
    );
    d.add(policySection(policy));
    d.add(
      connectionSection(() => ({ state: 'connected', reason: `last caller ${CALLER}` }), timeline),
    );
    d.add(
      connectionTestSection(() => ({
        at: NOW - 1000,
        result: { ok: false, message: `rejected ${SECRET}`, apiSecret: SECRET },
      })),
    );
    d.add(logSection(() => ring.snapshot()));
    // What another module (proxies, certificates) contributes.
    d.add({
      name: 'network',
      collect: () => ({
        proxy: `http://agent:${SECRET}@proxy.acme.example.com:3128`,
        headers: { authorization: `Bearer ${ACCESS}` },
        lastCaller: CALLER,
        certificate: 'issuer CN=Acme Root CA, 203.0.113.7, v2.14.1',
      }),
    });
    d.add({
      name: 'broken',
      collect: () => {
        throw new Error(`boom ${REFRESH}`);
      },
    });

    // A new name in a folder that exists (a folder that does not is refused: atomic-file tests).
    await mkdir(join(tmp.path, 'out'));
    const archive = join(tmp.path, 'out', 'diag.tar.gz');
    const names = await d.write(archive, { secrets, now: NOW });
    expect(names.map((n) => n.replace('screenpop-diagnostics/', '')).sort()).toEqual(
      [
        'README.txt',
        'about.json',
        'broken.json',
        'connection-test.json',
        'connection.json',
        'log.jsonl',
        'network.json',
        'policy.json',
        'settings.json',
      ].sort(),
    );
    // Written atomically: nothing but the archive in its folder.
    expect(await readdir(join(tmp.path, 'out'))).toEqual(['diag.tar.gz']);

    const files = await unpack(archive);
    const raw = gunzipSync(await readFile(archive)).toString('latin1');
    const everything = [...files.values()].join('\n');
    for (const planted of [
      SECRET,
      ACCESS,
      REFRESH,
      CALLER,
      '4155550123',
      '415) 555-0123',
      'agent:',
    ])
      for (const text of [everything, raw]) expect(text).not.toContain(planted);
    expect(everything).toContain('…0123');

    // What support needs is still there.
    const about = JSON.parse(files.get('about.json') ?? '{}') as Record<string, unknown>;
    expect(about).toMatchObject({ app: 'Screenpop', version: '1.2.3', platform: process.platform });
    const connection = JSON.parse(files.get('connection.json') ?? '{}') as {
      timeline: Array<{ state: string }>;
    };
    expect(connection.timeline.map((c) => c.state)).toEqual(['connecting', 'needs-attention']);
    expect(JSON.parse(files.get('settings.json') ?? '{}')).toMatchObject({
      keychain: 'holds the API secret for this key',
      settings: { baseUrl: 'https://acme.example.com', apiKey: 'ak_acme' },
    });
    expect(JSON.parse(files.get('policy.json') ?? '{}')).toMatchObject({ managedBy: 'Acme IT' });
    expect(files.get('network.json')).toContain('203.0.113.7, v2.14.1');
    expect(files.get('broken.json')).toContain('could not be collected');
    const log = (files.get('log.jsonl') ?? '')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { msg: string });
    expect(log.map((l) => l.msg)).toEqual(['call ringing from …0123', 'refresh failed', 'token']);
  });

  it('numbers are cut to their last four digits; dates, addresses, versions and ids are kept', () => {
    expect(maskNumbers('from +1 415 555 0123 to 101')).toBe('from …0123 to 101');
    expect(maskNumbers('+44 20 7946 0958; 4155550123')).toBe('…0958; …0123');
    // As people, phone systems and URLs also write them.
    const written: Array<[string, string]> = [
      ['call from 415.555.0124 ended', 'call from …0124 ended'],
      ['+1.415.555.0128', '…0128'],
      ['Tel. 030/1234567', 'Tel. …4567'],
      ['＋１ ４１５ ５５５ ０１２３', '…0123'],
      ['４１５５５５０１２５', '…0125'],
      ['?from=%2B14155550126&x=1', '?from=…0126&x=1'],
      ['+1%20415%20555%200127', '…0127'],
      ['tel:+14155550129', 'tel:…0129'],
      ['sip:4155550130@pbx.example.com', 'sip:…0130@pbx.example.com'],
    ];
    for (const [text, masked] of written) expect(maskNumbers(text), text).toBe(masked);
    for (const keep of [
      '10.0.0.1',
      '23.11.2026',
      '23/11/2026',
      '"time":"08:56:42.576Z"',
      '2026-11-23T10:00:00.000Z',
      'on 2026-11-23',
      '203.0.113.7:8443',
      'v2.14.1',
      'call c0ffee-1234567',
      '550e8400-e29b-41d4-a716-446655440000',
      'https://crm.example.com/x/12345678',
      'ext 101',
    ])
      expect(maskNumbers(keep)).toBe(keep);
  });

  it('the agent’s notes on calls are never in the archive, whatever section carries them; numbers beside them are masked', () => {
    const queued = {
      pending: [
        {
          callId: '1700000001.11',
          from: '+1 415 555 0123',
          note: 'Wants a quote; her mobile is +44 20 7946 0958',
          disposition: 'Follow-up',
        },
      ],
      notes: 'Rang back, all good',
    };
    const out = JSON.stringify(redactForSupport(queued, new SecretRegistry()));
    expect(out).not.toContain('quote');
    expect(out).not.toContain('7946');
    expect(out).not.toContain('Rang back');
    expect(out).not.toContain('555 0123');
    expect(out).toContain('"note":"[note: 45 characters]"');
    expect(out).toContain('"from":"…0123"');
    expect(out).toContain('"disposition":"Follow-up"');
  });

  it('keeps a bounded number of log lines and status changes', () => {
    const ring = new LogRing(3);
    const logger = createLogger({ sink: ring.tee(() => {}) });
    for (let i = 0; i < 10; i++) logger.info(`line ${i}`);
    expect(ring.snapshot().items.map((r) => r.msg)).toEqual(['line 7', 'line 8', 'line 9']);
    expect(ring.snapshot().dropped).toBe(7);
    const t = new StatusTimeline(2);
    t.record(1, { state: 'connecting' });
    t.record(2, { state: 'connecting' }); // not a change
    t.record(3, { state: 'connected' });
    t.record(4, { state: 'offline' });
    expect(t.snapshot().items.map((c) => c.at)).toEqual([3, 4]);
  });
});
