/**
 * Black-box: the headless runner as a child process against an in-process simulator. Only stdout
 * lines, stderr and the exit code are observed.
 */
import { execFileSync, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import {
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { createServer as createHttpServer, type IncomingMessage } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { describeErrcode } from '../../src-shared/api/service-errors.ts';
import { startSimulator, type Simulator } from '../../src-sim/index.ts';
import { childEnv } from '../support/child-env.ts';
import { waitFor } from '../../rigs/wait.ts';
import { certToolsAvailable, makeTestCa } from '../../rigs/certs.ts';
import { startFakeHubSpot } from '../../rigs/fake-hubspot.ts';
import { phrase, render } from '../../src-shared/i18n/phrase.ts';
import { createTranslator } from '../../src-shared/i18n/translator.ts';

const CLI = 'src-main/headless/cli.ts';

interface Child {
  proc: ChildProcessWithoutNullStreams;
  lines: Array<Record<string, unknown>>;
  raw: string[];
  /** stdout exactly as written, for what a line reader other than Node's would see. */
  out: () => string;
  stderr: () => string;
  exit: Promise<number | null>;
}

const children: Child[] = [];
const sims: Simulator[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) if (c.proc.exitCode === null) c.proc.kill('SIGKILL');
  for (const s of sims.splice(0)) await s.close();
});

function run(args: string[], env: Record<string, string>): Child {
  const proc = spawn(process.execPath, [CLI, ...args], {
    env: childEnv(env),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const raw: string[] = [];
  const lines: Array<Record<string, unknown>> = [];
  createInterface({ input: proc.stdout }).on('line', (l) => {
    raw.push(l);
    lines.push(JSON.parse(l) as Record<string, unknown>);
  });
  let out = '';
  proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
  let err = '';
  proc.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exit = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  const child = { proc, lines, raw, out: () => out, stderr: () => err, exit };
  children.push(child);
  return child;
}

/**
 * A forward proxy that tunnels every CONNECT to one port on this computer, whatever host it names:
 * the runner reaches "api.hubapi.com" and finds the fake HubSpot there. Records what it was asked.
 */
async function tunnelTo(
  port: number,
): Promise<{ url: string; connects: string[]; close(): Promise<void> }> {
  const connects: string[] = [];
  const tunnels = new Set<Socket>();
  const server = createHttpServer((_req, res) => res.writeHead(405).end());
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    connects.push(req.url ?? '');
    const upstream = connect(port, '127.0.0.1', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    tunnels.add(client).add(upstream);
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connects,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of tunnels) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A child process gets 10 s (start-up under load), and a time-out shows its stderr. */
const childWait = (child: Child) => ({
  timeoutMs: 10_000,
  detail: () => `stderr:\n${child.stderr()}`,
});

describe('screenpop-headless', () => {
  it('prints status, pop (with caller name for a colleague) and dismiss lines; exits 0 on SIGTERM', async () => {
    const sim = await startSimulator();
    sims.push(sim);
    const child = run(
      [
        '--base-url',
        sim.baseUrl,
        '--extension',
        '101',
        '--did',
        '(415) 555-0100',
        '--region',
        'US',
      ],
      {
        SCREENPOP_API_KEY: sim.apiKey.key,
        SCREENPOP_API_SECRET: sim.apiKey.secret,
      },
    );
    await waitFor(
      () => child.lines.some((l) => l.type === 'status' && l.state === 'connected'),
      'connected',
      childWait(child),
    );
    sim.ring({ from: '205', to: '102' }); // someone else's call: no line
    const outside = sim.ring({ from: '+14155550123', to: '+14155550100' });
    const colleague = sim.extensions.find((e) => e.number !== '101')!;
    const internal = sim.ring({ from: colleague.number, to: '101' });
    sim.setCallState(outside, 'answered');
    await waitFor(
      () => child.lines.filter((l) => l.type !== 'status').length >= 3,
      'pops and dismiss',
      childWait(child),
    );
    expect(child.lines.filter((l) => l.type !== 'status')).toEqual([
      expect.objectContaining({
        type: 'pop',
        call_id: outside,
        from: '+14155550123',
        to: '+14155550100',
        caller_name: null,
        from_truncated: false,
        event_id: expect.any(String),
      }),
      expect.objectContaining({
        type: 'pop',
        call_id: internal,
        from: colleague.number,
        caller_name: colleague.caller_id_name,
      }),
      expect.objectContaining({ type: 'dismiss', call_id: outside, state: 'answered' }),
    ]);
    child.proc.kill('SIGTERM');
    expect(await child.exit).toBe(0);
    // stdout is JSON lines only; the secret is in no output at all.
    expect(child.raw.every((l) => l.startsWith('{') && l.endsWith('}'))).toBe(true);
    expect(child.raw.join('\n') + child.stderr()).not.toContain(sim.apiKey.secret);
  });

  it('--contacts names outside callers from an Outlook export and says where each name came from', async () => {
    const sim = await startSimulator();
    sims.push(sim);
    const child = run(
      [
        '--base-url',
        sim.baseUrl,
        '--extension',
        '101',
        '--region',
        'DE',
        // Outlook's German export, in Windows-1252, as the user saved it.
        '--contacts',
        'test/contacts/fixtures/outlook-de.csv',
      ],
      { SCREENPOP_API_KEY: sim.apiKey.key, SCREENPOP_API_SECRET: sim.apiKey.secret },
    );
    await waitFor(
      () => child.lines.some((l) => l.type === 'status' && l.state === 'connected'),
      'connected',
      childWait(child),
    );
    const colleague = sim.extensions.find((e) => e.number !== '101')!;
    const fromContact = sim.ring({ from: '+49 151 23456789', to: '101' });
    const fromColleague = sim.ring({ from: colleague.number, to: '101' });
    const unknown = sim.ring({ from: '+49 30 9999999', to: '101' });
    await waitFor(
      () => child.lines.filter((l) => l.type === 'pop').length >= 3,
      'three pops',
      childWait(child),
    );
    const pops = Object.fromEntries(
      child.lines.filter((l) => l.type === 'pop').map((l) => [l.call_id, l]),
    );
    expect(pops[fromContact]).toMatchObject({
      caller_name: 'Jürgen Müller',
      name_source: 'contacts',
      caller_company: 'Müller & Söhne KG',
      number_kind: 'mobile',
    });
    expect(pops[fromColleague]).toMatchObject({
      caller_name: colleague.caller_id_name,
      name_source: 'directory',
      caller_company: null,
      number_kind: null,
    });
    expect(pops[unknown]).toMatchObject({ caller_name: null, name_source: 'none' });
    child.proc.kill('SIGTERM');
    expect(await child.exit).toBe(0);
  });

  it('--contacts with a file that names nobody exits 2 and says which columns it found, in the chosen language', async () => {
    const child = run(
      // Google's "Other contacts": people you e-mailed, with no numbers.
      ['--demo', '--lang', 'de', '--contacts', 'test/contacts/fixtures/google-other-contacts.csv'],
      {},
    );
    expect(await child.exit).toBe(2);
    expect(child.raw).toEqual([]);
    expect(child.stderr()).toContain('google-other-contacts.csv: Keine Kontakte gefunden:');
    expect(child.stderr()).toContain(
      'Namen werden aus First Name, Middle Name, Last Name, Organization Name und Nummern aus Phone 1 - Value gelesen, aber keine der 3 Zeilen der Datei hat beides ausgefüllt.',
    );
    const missing = run(['--demo', '--contacts', '/nonexistent/contacts.vcf'], {});
    expect(await missing.exit).toBe(2);
    expect(missing.stderr()).toContain('The contacts file could not be read.');
  });

  it('--enrol with a relay that cannot be reached names its host, port and what happened', async () => {
    // The relay's address as README gives it (http on this computer), a port where nothing
    // listens. Before: "The service cannot be reached." (no relay, no address, no cause).
    const server = createServer();
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((done) => server.close(() => done()));
    const child = run(
      [
        '--relay-url',
        `http://127.0.0.1:${port}`,
        '--relay-tenant',
        'acme',
        '--enrol',
        'K7QM-2RXD-94TW',
      ],
      {},
    );
    expect(await child.exit).toBe(3);
    expect(child.lines.find((l) => l.type === 'status')).toMatchObject({
      reason: `127.0.0.1:${port} cannot be reached: the connection was refused (nothing listens on that port, or a firewall refuses it).`,
    });
    expect(child.out() + child.stderr()).not.toContain('K7QM-2RXD-94TW');
  });

  it('--contacts with a vCard whose quoted-printable value runs on for megabytes exits 2 at once, naming the line', async () => {
    // 5 MiB of soft line breaks: the runner read it for minutes (188 s) before its first pop.
    const dir = mkdtempSync(join(tmpdir(), 'runner-contacts-'));
    const file = join(dir, 'damaged.vcf');
    const soft = `${'=41'.repeat(25)}=\r\n`;
    writeFileSync(
      file,
      'BEGIN:VCARD\r\nVERSION:2.1\r\nTEL;CELL:+14155550101\r\nFN;ENCODING=QUOTED-PRINTABLE:' +
        soft.repeat(Math.floor((5 * 1024 * 1024 - 200) / soft.length)) +
        'A\r\nEND:VCARD\r\n',
    );
    try {
      const child = run(['--demo', '--contacts', file], {});
      expect(await child.exit).toBe(2);
      expect(child.raw).toEqual([]);
      expect(child.stderr()).toContain(
        'damaged.vcf: The contacts file looks damaged at line 4: a quoted-printable value starting there runs on for more than 64 KB',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.skipIf(!certToolsAvailable('test/headless/headless.test.ts'))(
    '--crm hubspot: an enriched line follows the pop line with what HubSpot answered (at its real address, through HTTPS_PROXY); a colleague is not looked up; SCREENPOP_HUBSPOT_API is not read',
    async () => {
      const sim = await startSimulator();
      sims.push(sim);
      const dir = mkdtempSync(join(tmpdir(), 'runner-crm-'));
      const ca = makeTestCa(dir);
      // HubSpot at its own address, api.hubapi.com: a proxy the runner is told of (HTTPS_PROXY)
      // tunnels it to the fake, whose certificate names that host.
      const cert = ca.issue('hubspot', { hosts: ['DNS:api.hubapi.com'] });
      const hubspot = await startFakeHubSpot({
        cert: cert.cert,
        key: cert.key,
        tokens: { 'pat-na1-runner': ['crm.objects.contacts.read'] },
      });
      const proxy = await tunnelTo(Number(new URL(hubspot.url).port));
      // An address set in the environment is not where the CRM token goes (it once was).
      const elsewhere = ca.issue('elsewhere');
      const other = await startFakeHubSpot({
        cert: elsewhere.cert,
        key: elsewhere.key,
        tokens: { 'pat-na1-runner': ['crm.objects.contacts.read'] },
      });
      const ada = hubspot.addContact({
        firstname: 'Ada',
        lastname: 'Lovelace',
        company: 'Analytical Engines',
        phone: '+14155550123',
      });
      try {
        const child = run(
          [
            '--base-url',
            sim.baseUrl,
            '--extension',
            '101',
            '--crm',
            'hubspot',
            '--ca-file',
            ca.caFile,
          ],
          {
            SCREENPOP_API_KEY: sim.apiKey.key,
            SCREENPOP_API_SECRET: sim.apiKey.secret,
            SCREENPOP_CRM_TOKEN: 'pat-na1-runner',
            SCREENPOP_HUBSPOT_API: other.url,
            HTTPS_PROXY: proxy.url,
            NO_PROXY: '127.0.0.1,localhost',
          },
        );
        await waitFor(
          () => child.lines.some((l) => l.type === 'status' && l.state === 'connected'),
          'connected',
          childWait(child),
        );
        const colleague = sim.extensions.find((e) => e.number !== '101')!;
        const outside = sim.ring({ from: '+14155550123', to: '101' });
        const internal = sim.ring({ from: colleague.number, to: '101' });
        const unknown = sim.ring({ from: '+14155550999', to: '101' });
        await waitFor(
          () => child.lines.filter((l) => l.type === 'enriched').length >= 2,
          'enriched lines',
          childWait(child),
        );
        const lines = child.lines.filter((l) => l.type === 'pop' || l.type === 'enriched');
        const at = (type: string, id: string) =>
          lines.findIndex((l) => l.type === type && l.call_id === id);
        expect(at('pop', outside)).toBeLessThan(at('enriched', outside));
        expect(lines[at('pop', outside)]).toMatchObject({ caller_name: null, name_source: 'none' });
        expect(lines[at('enriched', outside)]).toEqual({
          type: 'enriched',
          call_id: outside,
          provider: 'hubspot',
          status: 'found',
          reason: null,
          caller_name: 'Ada Lovelace',
          caller_company: 'Analytical Engines',
          record_url: `https://app.hubspot.com/contacts/20251122/record/0-1/${ada.id}`,
          name_source: 'crm',
          cached: false,
        });
        expect(lines[at('enriched', unknown)]).toMatchObject({
          status: 'not-found',
          caller_name: null,
        });
        expect(at('enriched', internal)).toBe(-1);
        expect(hubspot.searches).toHaveLength(2);
        expect(other.searches).toHaveLength(0);
        expect(proxy.connects).toContain('api.hubapi.com:443');
        child.proc.kill('SIGTERM');
        expect(await child.exit).toBe(0);
        expect(child.stderr()).not.toContain('pat-na1-runner');
      } finally {
        await hubspot.close();
        await other.close();
        await proxy.close();
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );

  it('pops a ring whose caller ID is longer than 256 characters, cut and flagged', async () => {
    const sim = await startSimulator();
    sims.push(sim);
    const child = run(['--base-url', sim.baseUrl, '--extension', '101'], {
      SCREENPOP_API_KEY: sim.apiKey.key,
      SCREENPOP_API_SECRET: sim.apiKey.secret,
    });
    await waitFor(
      () => child.lines.some((l) => l.type === 'status' && l.state === 'connected'),
      'connected',
      childWait(child),
    );
    const callerId = `Spam Caller ${'x'.repeat(1000)}`;
    const callId = sim.ring({ from: callerId, to: '101' });
    await waitFor(() => child.lines.some((l) => l.type === 'pop'), 'the pop', childWait(child));
    expect(child.lines.find((l) => l.type === 'pop')).toMatchObject({
      call_id: callId,
      from: callerId.slice(0, 256),
      from_truncated: true,
    });
    child.proc.kill('SIGTERM');
    expect(await child.exit).toBe(0);
  });

  it('prints voicemail, sms, trunk and presence lines; a key without event:30031 prints a feature line and the rest works', async () => {
    const sim = await startSimulator();
    sims.push(sim);
    const key = sim.createApiKey({
      name: 'no-sms',
      scopes: ['extension:read', 'event:30011', 'event:30015', 'event:30007', 'event:30009'],
    });
    const child = run(['--base-url', sim.baseUrl, '--extension', '101', '--did', '+14155550100'], {
      SCREENPOP_API_KEY: key.key,
      SCREENPOP_API_SECRET: key.secret,
    });
    await waitFor(
      () => child.lines.some((l) => l.type === 'feature'),
      'the feature line',
      childWait(child),
    );
    expect(child.lines.find((l) => l.type === 'feature')).toEqual({
      type: 'feature',
      feature: 'sms',
      state: 'no-scope',
      code: 30031,
      reason: 'SMS is off: the key may not receive event code 30031.',
      remedy: expect.stringContaining('event:30031'),
    });
    await waitFor(
      () => child.lines.some((l) => l.type === 'status' && l.state === 'connected'),
      'connected',
      childWait(child),
    );
    const colleague = sim.extensions.find((e) => e.number !== '101')!;
    sim.voicemail({ extension: '101', from: colleague.number, durationSec: 42, voicemailId: 'v1' });
    sim.sms({ from: '+4930123456', to: '+14155550100', text: 'never delivered' });
    sim.setTrunkStatus('SIP-Main', 'unregistered');
    sim.setPresence('101', 'do_not_disturb');
    sim.ring({ from: '+14155550123', to: '101' });
    await waitFor(
      () => child.lines.filter((l) => !['status', 'feature'].includes(String(l.type))).length >= 4,
      'four lines',
      childWait(child),
    );
    expect(child.lines.filter((l) => !['status', 'feature'].includes(String(l.type)))).toEqual([
      expect.objectContaining({
        type: 'voicemail',
        voicemail_id: 'v1',
        extension: '101',
        from: colleague.number,
        caller_name: colleague.caller_id_name,
        duration_sec: 42,
        notify: true,
      }),
      expect.objectContaining({
        type: 'trunk',
        trunk: 'SIP-Main',
        status: 'unregistered',
        registered: false,
        down: ['SIP-Main'],
      }),
      expect.objectContaining({ type: 'presence', status: 'do_not_disturb', do_not_disturb: true }),
      expect.objectContaining({ type: 'pop', from: '+14155550123' }),
    ]);
    child.proc.kill('SIGTERM');
    expect(await child.exit).toBe(0);
  });

  it('an SMS line carries the text as data and a one-line safe preview', async () => {
    const sim = await startSimulator();
    sims.push(sim);
    const child = run(['--base-url', sim.baseUrl, '--extension', '101', '--without', 'presence'], {
      SCREENPOP_API_KEY: sim.apiKey.key,
      SCREENPOP_API_SECRET: sim.apiKey.secret,
    });
    await waitFor(
      () => child.lines.some((l) => l.type === 'status' && l.state === 'connected'),
      'connected',
      childWait(child),
    );
    const text = `\u202Eevil\u202C <script>alert(1)</script>\nline two\u2028 https://x.example ${'z'.repeat(1500)}`;
    sim.setPresence('101', 'away'); // presence is off: no line
    sim.sms({ from: '+4930123456', to: '101', text });
    await waitFor(() => child.lines.some((l) => l.type === 'sms'), 'the sms', childWait(child));
    const line = child.lines.find((l) => l.type === 'sms')!;
    expect(line).toMatchObject({ text, text_truncated: false, notify: true });
    const preview = String(line.preview);
    expect(preview.startsWith('evil <script>alert(1)</script> line two https://x.example z')).toBe(
      true,
    );
    expect(Array.from(preview)).toHaveLength(160);
    expect(preview.endsWith('…')).toBe(true);
    // One JSON object per line, whatever the text held (U+2028 escaped too).
    expect(child.raw.every((l) => l.startsWith('{') && l.endsWith('}'))).toBe(true);
    expect(child.lines.some((l) => l.type === 'presence')).toBe(false);
    child.proc.kill('SIGTERM');
    expect(await child.exit).toBe(0);
  });

  it('escapes every control, line-breaking and bidi character in every field of every line', async () => {
    const sim = await startSimulator();
    sims.push(sim);
    const child = run(['--base-url', sim.baseUrl, '--extension', '101'], {
      SCREENPOP_API_KEY: sim.apiKey.key,
      SCREENPOP_API_SECRET: sim.apiKey.secret,
    });
    await waitFor(
      () => child.lines.some((l) => l.type === 'status' && l.state === 'connected'),
      'connected',
      childWait(child),
    );
    // NEL (U+0085) ends a line for readers that split the Unicode way; U+009B is a terminal's CSI;
    // RLO reverses what follows on screen; NUL, CR, LF; LS, PS; a zero-width space; a BOM.
    const hostile = '\u0085\u009b31m\u202e\u0000\r\n\u2028\u2029\u200b\ufeff\u2066';
    const from = `+1415555${hostile}0123`;
    sim.ring({ from, to: '101' });
    sim.voicemail({ extension: '101', from, durationSec: 5, callerName: `Eve${hostile}lyn` });
    sim.setTrunkStatus(`SIP${hostile}Main`, `unregistered${hostile}`);
    sim.setPresence('101', `away${hostile}`);
    await waitFor(
      () =>
        ['pop', 'voicemail', 'trunk', 'presence'].every((t) =>
          child.lines.some((l) => l.type === t),
        ),
      'the four lines',
      childWait(child),
    );
    child.proc.kill('SIGTERM');
    expect(await child.exit).toBe(0);
    const out = child.out();
    // Nothing but escapes in the text: no reader sees a line break, a control or a bidi mark; in
    // the log lines on stderr neither.
    const raw =
      // eslint-disable-next-line no-control-regex
      /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/;
    expect(out).not.toMatch(raw);
    expect(child.stderr()).not.toMatch(raw);
    const unicodeLines = out.split(/\r\n|[\n\r\v\f\u0085\u2028\u2029]/).filter((l) => l !== '');
    expect(unicodeLines).toEqual(child.raw);
    // The same values parse back: a number keeps what the phone system sent ...
    const pop = child.lines.find((l) => l.type === 'pop')!;
    expect(pop.from).toBe(from);
    // ... and names and states meant for people are cleaned like a pop's caller name.
    expect(child.lines.find((l) => l.type === 'voicemail')).toMatchObject({
      from,
      caller_name: 'Eve31mlyn',
    });
    expect(child.lines.find((l) => l.type === 'trunk')).toMatchObject({
      trunk: 'SIP31mMain',
      status: 'unregistered31m',
      down: ['SIP31mMain'],
    });
    expect(child.lines.find((l) => l.type === 'presence')).toMatchObject({ status: 'away31m' });
  });

  it('--diagnostics refuses a device, a FIFO and a missing folder by name, and leaves them as they were', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'screenpop-diag-target-'));
    try {
      const fifo = join(dir, 'pipe');
      execFileSync('mkfifo', [fifo]);
      const targets: Array<[string, RegExp]> = [
        [fifo, /that is a named pipe \(FIFO\), not a file/],
        [join(dir, 'typo', 'diag.tar.gz'), /its folder does not exist/],
        [dir, /that is a folder, not a file/],
      ];
      // As root (tests and CI run as root), the same device node as /dev/null, in the folder.
      const device = join(dir, 'null');
      if (process.getuid?.() === 0) {
        execFileSync('mknod', [device, 'c', '1', '3']);
        symlinkSync(device, join(dir, 'to-null'));
        targets.push([device, /that is a device, not a file/]);
        targets.push([join(dir, 'to-null'), /that is a device, not a file/]);
      } else console.warn('headless.test.ts: not root; the device-node case is skipped');
      for (const [path, words] of targets) {
        const child = run(['--diagnostics', path, '--base-url', 'https://x.example'], {});
        expect(await child.exit, child.stderr()).toBe(2);
        expect(child.stderr()).toContain(`--diagnostics ${path}: `);
        expect(child.stderr()).toMatch(words);
        expect(child.raw).toEqual([]);
      }
      expect(statSync(fifo).isFIFO()).toBe(true);
      if (process.getuid?.() === 0) expect(statSync(device).isCharacterDevice()).toBe(true);
      expect(readdirSync(dir).sort()).toEqual(
        process.getuid?.() === 0 ? ['null', 'pipe', 'to-null'] : ['pipe'],
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('starts with a FIFO as --policy (says the policy is not a file, runs without it); refuses one as --ca-file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'screenpop-policy-fifo-'));
    try {
      const fifo = join(dir, 'policy.json');
      execFileSync('mkfifo', [fifo]);
      const child = run(['--policy', fifo, '--demo'], {});
      await waitFor(
        () => child.lines.some((l) => l.type === 'status' && l.state === 'connected'),
        'connected',
        childWait(child),
      );
      expect(child.stderr()).toContain(
        '"msg":"the policy is not a regular file (a FIFO, a device or a folder); no policy applies"',
      );
      child.proc.kill('SIGTERM');
      expect(await child.exit).toBe(0);
      // The same FIFO as the CA file: refused by name at once (exit 2), not read for ever.
      const ca = run(['--ca-file', fifo, '--base-url', 'https://x.example', '--extension', '101'], {
        SCREENPOP_API_KEY: 'ak_test',
        SCREENPOP_API_SECRET: 'not-used-here',
      });
      expect(await ca.exit).toBe(2);
      expect(ca.stderr()).toContain(
        `The CA file ${fifo} is not a regular file (a FIFO, a device or a folder).`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.runIf(process.platform !== 'win32')(
    "runs at most 8 of the policy's ring programs at once, and stops them and their children when it stops",
    async () => {
      const sim = await startSimulator();
      sims.push(sim);
      const dir = mkdtempSync(join(tmpdir(), 'screenpop-ring-tree-'));
      try {
        // Ignores SIGTERM and leaves a child that ignores it too; both write their pid.
        const program = join(dir, 'stubborn');
        writeFileSync(
          program,
          [
            '#!/bin/sh',
            "trap '' TERM",
            'sh -c \'trap "" TERM; echo $$ > "$0.child"; exec sleep 300\' "$1" &',
            'echo $$ > "$1.parent"',
            'wait',
            '',
          ].join('\n'),
          { mode: 0o755 },
        );
        const policy = join(dir, 'policy.json');
        writeFileSync(
          policy,
          JSON.stringify({ onRing: [{ run: program, args: [`${dir}/ring-{call_id}`] }] }),
        );
        const child = run(['--base-url', sim.baseUrl, '--extension', '101', '--policy', policy], {
          SCREENPOP_API_KEY: sim.apiKey.key,
          SCREENPOP_API_SECRET: sim.apiKey.secret,
        });
        await waitFor(
          () => child.lines.some((l) => l.type === 'status' && l.state === 'connected'),
          'connected',
          childWait(child),
        );
        for (let i = 0; i < 30; i++)
          sim.ring({ from: `+1415555${String(i).padStart(4, '0')}`, to: '101' });
        await waitFor(
          () => child.lines.filter((l) => l.type === 'pop').length === 30,
          '30 pops',
          childWait(child),
        );
        const pidFiles = () =>
          readdirSync(dir).filter((f) => f.endsWith('.parent') || f.endsWith('.child'));
        await waitFor(
          () => pidFiles().length >= 16,
          'eight programs and their children',
          childWait(child),
        );
        await new Promise((r) => setTimeout(r, 1_000));
        // 30 rings, one action each: 8 started, the rest dropped with one line and a count.
        expect(pidFiles().filter((f) => f.endsWith('.parent'))).toHaveLength(8);
        expect(child.stderr()).toContain(
          'ring action: too many programs running; this start is dropped',
        );
        const pids = pidFiles().map((f) => Number(readFileSync(join(dir, f), 'utf8')));
        child.proc.kill('SIGTERM');
        expect(await child.exit).toBe(0);
        const running = (pid: number) => {
          try {
            process.kill(pid, 0);
          } catch {
            return false;
          }
          const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
          return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
        };
        await waitFor(
          () => pids.every((pid) => !running(pid)),
          'every program and child gone',
          childWait(child),
        );
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );

  describe("the policy's locks beat the runner's flags, and say so", () => {
    const withPolicy = (policy: unknown): { dir: string; file: string } => {
      const dir = mkdtempSync(join(tmpdir(), 'screenpop-locks-'));
      const file = join(dir, 'policy.json');
      writeFileSync(file, JSON.stringify({ managedBy: 'Acme IT', ...(policy as object) }));
      return { dir, file };
    };

    it("a locked language beats --lang (the status words are the policy's language)", async () => {
      const sim = await startSimulator();
      sims.push(sim);
      const { dir, file } = withPolicy({ settings: { language: 'de' }, locked: ['language'] });
      try {
        const child = run(
          ['--base-url', sim.baseUrl, '--extension', '101', '--policy', file, '--lang', 'fr'],
          { SCREENPOP_API_KEY: sim.apiKey.key, SCREENPOP_API_SECRET: sim.apiKey.secret },
        );
        await waitFor(
          () => child.lines.some((l) => l.type === 'status' && l.state === 'connecting'),
          'connecting',
          childWait(child),
        );
        const connecting = child.lines.find((l) => l.type === 'status')!;
        expect(connecting.reason).toBe(
          render([phrase('status.connecting-service')], createTranslator('de', { isolate: false })),
        );
        expect(child.stderr()).toMatch(/"setting":"language","managedBy":"Acme IT"/);
        child.proc.kill('SIGTERM');
        expect(await child.exit).toBe(0);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('a demo locked off is not started by --demo, and says why', async () => {
      const { dir, file } = withPolicy({ locked: ['demoMode'] });
      try {
        const child = run(['--demo', '--policy', file], {});
        expect(await child.exit).toBe(2);
        expect(child.stderr()).toContain(
          'the policy of Acme IT locks the demo off (demoMode), so --demo is not used',
        );
        expect(child.raw).toEqual([]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('a lock on apiKey without a value is named, not "set SCREENPOP_API_KEY" when it is set', async () => {
      const { dir, file } = withPolicy({ locked: ['apiKey'] });
      try {
        const child = run(
          ['--base-url', 'https://x.example', '--extension', '101', '--policy', file],
          {
            SCREENPOP_API_KEY: 'ak_given',
            SCREENPOP_API_SECRET: 'not-used-here',
          },
        );
        expect(await child.exit).toBe(2);
        expect(child.stderr()).toContain(
          'the policy of Acme IT locks apiKey without giving one, so SCREENPOP_API_KEY is not used',
        );
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('a locked region is the one contacts are read with, whatever --region says', async () => {
      const sim = await startSimulator();
      sims.push(sim);
      const { dir, file } = withPolicy({
        settings: { defaultRegion: 'GB' },
        locked: ['defaultRegion'],
      });
      try {
        const contacts = join(dir, 'contacts.vcf');
        // A national number: London's only when read as GB.
        writeFileSync(
          contacts,
          'BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Ada Lovelace\r\nTEL:020 7946 0958\r\nEND:VCARD\r\n',
        );
        const child = run(
          [
            '--base-url',
            sim.baseUrl,
            '--extension',
            '101',
            '--policy',
            file,
            '--region',
            'US',
            '--contacts',
            contacts,
          ],
          { SCREENPOP_API_KEY: sim.apiKey.key, SCREENPOP_API_SECRET: sim.apiKey.secret },
        );
        await waitFor(
          () => child.lines.some((l) => l.type === 'status' && l.state === 'connected'),
          'connected',
          childWait(child),
        );
        sim.ring({ from: '+442079460958', to: '101' });
        await waitFor(() => child.lines.some((l) => l.type === 'pop'), 'the pop', childWait(child));
        expect(child.lines.find((l) => l.type === 'pop')).toMatchObject({
          caller_name: 'Ada Lovelace',
        });
        expect(child.stderr()).toMatch(/"setting":"defaultRegion","managedBy":"Acme IT"/);
        child.proc.kill('SIGTERM');
        expect(await child.exit).toBe(0);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('a policy proxy whose address was refused fails closed, naming the policy; it never connects directly', async () => {
      const sim = await startSimulator();
      sims.push(sim);
      const { dir, file } = withPolicy({
        settings: { proxyMode: 'manual', proxyUrl: 'socks5://proxy.acme.example:1080' },
        locked: ['proxyMode', 'proxyUrl'],
      });
      try {
        const child = run(['--base-url', sim.baseUrl, '--extension', '101', '--policy', file], {
          SCREENPOP_API_KEY: sim.apiKey.key,
          SCREENPOP_API_SECRET: sim.apiKey.secret,
        });
        expect(await child.exit).toBe(3);
        expect(child.lines.at(-1)).toMatchObject({
          type: 'status',
          state: 'needs-attention',
          reason:
            'The policy of Acme IT sends connections through a proxy, but the proxy address it gives is missing or was refused: Screenpop does not connect around the proxy.',
          remedy:
            'Ask Acme IT to correct proxyUrl in the policy (the log names what is wrong with it).',
        });
        expect(sim.stats().getToken).toBe(0);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });

  it('exits 3 with a needs-attention line when the secret is wrong', async () => {
    const sim = await startSimulator();
    sims.push(sim);
    const child = run(['--base-url', sim.baseUrl, '--extension', '101'], {
      SCREENPOP_API_KEY: sim.apiKey.key,
      SCREENPOP_API_SECRET: 'definitely-not-the-secret',
    });
    expect(await child.exit).toBe(3);
    // The reason the tray and Test connection give for the same fault; the remedy names the
    // runner's environment, not the app's Settings window.
    const { reason } = describeErrcode(10001);
    expect(child.lines.at(-1)).toMatchObject({
      type: 'status',
      state: 'needs-attention',
      errcode: 10001,
      reason,
      remedy:
        'Check SCREENPOP_API_KEY and SCREENPOP_API_SECRET (or the secret kept in the keychain: --store-secret); if the secret is lost, regenerate the key in the admin console.',
    });
    expect(child.stderr()).not.toContain('definitely-not-the-secret');
  });

  it('exits 2 on a usage error, with nothing on stdout', async () => {
    for (const args of [
      ['--extension', '101'],
      ['--base-url', 'http://example.com', '--extension', '101'],
      ['--base-url', 'https://x.example', '--extension', '1a'],
      ['--bogus'],
      ['--demo', '--heartbeat-sec', '1'],
      ['--base-url', 'https://x.example', '--extension', '101', '--event-source', 'relay'],
      [
        '--base-url',
        'https://x.example',
        '--extension',
        '101',
        '--relay-url',
        'ws://relay.example',
      ],
    ]) {
      const child = run(args, { SCREENPOP_API_KEY: 'k' });
      expect(await child.exit).toBe(2);
      expect(child.raw).toEqual([]);
    }
    // Seven runners one after another, each allowed childWait's 10 s: 30 s ran out at load 20.
  }, 80_000);

  it('exits 2 for a CRM lookup it could not use, naming what is wrong', async () => {
    const cases: Array<[string[], string]> = [
      [['--crm', 'generic', '--crm-url', 'http://crm.example/?phone={number}'], 'https://'],
      [['--crm', 'generic', '--crm-url', 'https://crm.example/{number}'], 'query parameter'],
      [['--crm', 'salesforce'], '--crm: must be one of'],
    ];
    for (const [args, words] of cases) {
      const child = run(['--demo', ...args], {});
      expect(await child.exit).toBe(2);
      expect(child.raw).toEqual([]);
      expect(child.stderr()).toContain(words);
    }
  });

  it('--demo rings the extension through the in-process simulator; SIGINT exits 0', async () => {
    const child = run(['--demo', '--extension', '105'], {});
    await waitFor(() => child.lines.some((l) => l.type === 'pop'), 'a demo pop', childWait(child));
    expect(child.lines.find((l) => l.type === 'pop')).toMatchObject({
      to: '105',
      call_id: expect.any(String),
    });
    child.proc.kill('SIGINT');
    expect(await child.exit).toBe(0);
  });
});
