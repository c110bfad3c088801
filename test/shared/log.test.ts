import { describe, expect, it, vi } from 'vitest';
import { jsonLine } from '../../src-shared/files/json-text.ts';
import {
  createLogger,
  MAX_CAUSE_DEPTH,
  MAX_STACK_LINES,
  REDACTED,
  SecretRegistry,
  TOO_DEEP,
} from '../../src-shared/process/log.ts';
import { memoryLogger } from '../../rigs/memory-logger.ts';
import { withoutSecrets } from '../../src-main/core/settings/validate-settings.ts';

describe('logger redaction', () => {
  it('scrubs registered secrets from messages and nested fields', () => {
    const secrets = new SecretRegistry();
    secrets.add('s3cr3t-api-secret');
    secrets.add('tok_abcdef123456');
    const log = memoryLogger(secrets);
    log.warn('refresh failed for tok_abcdef123456', {
      detail: { body: 'password was s3cr3t-api-secret', list: ['x tok_abcdef123456 y'] },
    });
    const line = JSON.stringify(log.records);
    expect(line).not.toContain('s3cr3t-api-secret');
    expect(line).not.toContain('tok_abcdef123456');
    expect(log.records[0]?.msg).toBe(`refresh failed for ${REDACTED}`);
  });

  it('masks fields named like secrets whatever their value, and bearer/query tokens in text', () => {
    const log = memoryLogger();
    log.info('connect', {
      access_token: 'short',
      headers: { Authorization: 'Bearer abc.def' },
      url: 'wss://x/subscribe?access_token=zzz&a=1',
      note: 'sent Bearer eyJhbGciOi.payload.sig',
    });
    const r = log.records[0]!;
    expect(r.access_token).toBe(REDACTED);
    expect((r.headers as Record<string, unknown>).Authorization).toBe(REDACTED);
    expect(r.url).toBe(`wss://x/subscribe?access_token=${REDACTED}&a=1`);
    expect(r.note).toBe(`sent Bearer ${REDACTED}`);
  });

  it('keeps errors readable without leaking', () => {
    const secrets = new SecretRegistry();
    secrets.add('hunter2hunter2');
    const log = memoryLogger(secrets);
    log.error('boom', { err: new Error('bad secret hunter2hunter2') });
    expect(log.records[0]?.err).toMatchObject({ name: 'Error', message: `bad secret ${REDACTED}` });
    expect(JSON.stringify(log.records)).not.toContain('hunter2hunter2');
  });

  it('keeps what support needs of an error: code, cause chain, stack; a secret in any never reaches the log', () => {
    // Before, an error was logged as its name and message only.
    const secrets = new SecretRegistry();
    secrets.add('tok_in_the_cause_123');
    secrets.add('ss_in_the_stack_456');
    const log = memoryLogger(secrets);
    const root = Object.assign(new Error('socket hang up (Bearer tok_in_the_cause_123)'), {
      code: 'ECONNRESET',
    });
    const middle = new Error('refresh failed', { cause: root });
    // A stack whose frames carry a secret (an URL with the secret in a frame's name).
    middle.stack = `Error: refresh failed\n    at https://x/?k=ss_in_the_stack_456 (/opt/app/a.js:1:2)`;
    const top = Object.assign(new Error('could not connect', { cause: middle }), { code: 40002 });
    log.error('connect failed', {
      error: top,
      plain: { cause: { detail: 'tok_in_the_cause_123' } },
    });
    const e = log.records[0]!.error as Record<string, unknown>;
    expect(e).toMatchObject({ name: 'Error', message: 'could not connect', code: 40002 });
    expect(String(e.stack)).toMatch(/^Error: could not connect\n\s+at .*log\.test\.ts/);
    const m = e.cause as Record<string, unknown>;
    expect(m).toMatchObject({ message: 'refresh failed' });
    expect(m.stack).toBe(
      `Error: refresh failed\n    at https://x/?k=${REDACTED} (/opt/app/a.js:1:2)`,
    );
    expect(m.cause).toMatchObject({
      message: `socket hang up (Bearer ${REDACTED})`,
      code: 'ECONNRESET',
    });
    const line = jsonLine(log.records[0]!);
    expect(line).not.toContain('tok_in_the_cause_123');
    expect(line).not.toContain('ss_in_the_stack_456');
  });

  it('bounds an error: MAX_CAUSE_DEPTH causes, MAX_STACK_LINES lines, a cycle ends', () => {
    const log = memoryLogger();
    let err = new Error('cause 0');
    for (let i = 1; i <= 10; i++) err = new Error(`cause ${i}`, { cause: err });
    err.stack = ['Error: cause 10', ...Array.from({ length: 100 }, (_, i) => `    at f${i}`)].join(
      '\n',
    );
    const loop: Error & { cause?: unknown } = new Error('loop');
    loop.cause = loop;
    log.error('deep', { err, loop });
    let e = log.records[0]!.err as Record<string, unknown>;
    expect(String(e.stack).split('\n')).toHaveLength(MAX_STACK_LINES);
    for (let i = 0; i < MAX_CAUSE_DEPTH; i++) e = e.cause as Record<string, unknown>;
    expect(e.message).toBe(`cause ${10 - MAX_CAUSE_DEPTH}`);
    expect(e.cause).toBe(TOO_DEEP);
    expect(JSON.stringify(log.records[0]!.loop).length).toBeLessThan(20_000);
  });

  it('writes the home folder as ~ in every line, in each form a path takes', () => {
    const secrets = new SecretRegistry().hideHome('/home/alice');
    const log = memoryLogger(secrets);
    const err = new Error('cannot read /home/alice/.config/Screenpop/settings.json');
    err.stack = 'Error: x\n    at read (file:///home/alice/app/main.js:3:9)';
    log.warn('failed in /home/alice', {
      error: err,
      other: '/home/alicebob/x',
      json: '"/home/alice"',
    });
    const r = log.records[0]!;
    expect(r.msg).toBe('failed in ~');
    expect(r.error).toMatchObject({
      message: 'cannot read ~/.config/Screenpop/settings.json',
      stack: 'Error: x\n    at read (file://~/app/main.js:3:9)',
    });
    expect(r.other).toBe('/home/alicebob/x');
    expect(r.json).toBe('"~"');
    const windows = new SecretRegistry().hideHome('C:\\Users\\Alice Smith\\');
    expect(
      windows.scrub('at C:\\Users\\Alice Smith\\app\\x.js and file:///c:/users/alice%20smith/x'),
    ).toBe('at ~\\app\\x.js and file:///~/x');
    expect(windows.scrub(JSON.stringify('C:\\Users\\Alice Smith\\x'))).toBe('"~\\\\x"');
  });

  it('masks every field the diagnostics and settings files remove: one rule for secret-looking names', () => {
    // Before, the log masked an exact list (token, password, ...) while diagnostics and settings
    // removed anything containing one of those words: the log kept what diagnostics removed.
    const fields = {
      proxyPassword: 'pw-1',
      clientSecret: 'cs-1',
      id_token: 'it-1',
      'X-Relay-Signature': 'sig-1',
      privateKey: 'pk-1',
      credentials: { user: 'u' },
      passphrase: 'pp-1',
      apiKey: 'key-is-not-secret',
    };
    const log = memoryLogger();
    log.info('fields', fields);
    const r = log.records[0]!;
    const kept = withoutSecrets(fields) as Record<string, unknown>;
    for (const name of Object.keys(fields)) {
      if (name === 'apiKey') continue;
      expect(r[name], name).toBe(REDACTED);
      expect(kept, name).not.toHaveProperty(name);
    }
    expect(r.apiKey).toBe('key-is-not-secret');
    expect(kept.apiKey).toBe('key-is-not-secret');
  });

  it('leaves out what is nested too deep instead of passing it on unscrubbed', () => {
    const secrets = new SecretRegistry();
    secrets.add('deep-secret-value');
    const log = memoryLogger(secrets);
    let nested: unknown = { note: 'deep-secret-value', token: 'x' };
    for (let i = 0; i < 12; i++) nested = { inner: nested };
    log.info('deep', { nested });
    const line = JSON.stringify(log.records);
    expect(line).not.toContain('deep-secret-value');
    expect(line).toContain(TOO_DEEP);
    expect(JSON.stringify(withoutSecrets({ nested }))).toContain(TOO_DEEP);
  });

  it('scrubs a secret in the other forms it is written in: case, percent-encoding, JSON, base64', () => {
    const secret = 'Pa55/w+rd"é\\tail';
    const secrets = new SecretRegistry();
    secrets.add(secret);
    const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');
    const forms = {
      upper: secret.toUpperCase(),
      lower: secret.toLowerCase(),
      percent: encodeURIComponent(secret),
      percentLower: encodeURIComponent(secret).toLowerCase(),
      json: JSON.stringify({ password: secret }),
      jsonAscii: JSON.stringify(secret).replace(
        /[^\x20-\x7e]/g,
        (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
      ),
      // Inside longer base64 at each of the three alignments, and URL-safe.
      basic: `Authorization: Basic ${b64(`agent7:${secret}`)}`,
      aligned1: b64(`x${secret}yz`),
      aligned2: b64(`xy${secret}z`),
      urlSafe: b64(`agent7:${secret}`).replace(/\+/g, '-').replace(/\//g, '_'),
    };
    for (const [form, text] of Object.entries(forms)) {
      const out = secrets.scrub(`before ${text} after`);
      expect(out, form).toContain(REDACTED);
      for (const leak of [secret, forms.percent, b64(secret).slice(0, 8)])
        expect(out.toLowerCase(), form).not.toContain(leak.toLowerCase());
    }
    // Ordinary text is left alone, and removing a secret stops scrubbing it.
    expect(secrets.scrub('Password reset for agent7')).toBe('Password reset for agent7');
    secrets.remove(secret);
    expect(secrets.scrub(`x ${secret}`)).toBe(`x ${secret}`);
  });

  it('writes each record as one JSON line, with line breaks, C1 controls and bidi marks escaped', () => {
    const written: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      written.push(String(chunk));
      return true;
    });
    try {
      createLogger().warn('caller \u0085split\u2028here', { name: '\u202eevil\u009b31m\u200b' });
    } finally {
      spy.mockRestore();
    }
    expect(written).toHaveLength(1);
    const line = written[0]!;
    expect(line.endsWith('\n')).toBe(true);
    expect(line.slice(0, -1)).toMatch(/^[\x20-\x7e]+$/);
    expect(JSON.parse(line)).toMatchObject({
      msg: 'caller \u0085split\u2028here',
      name: '\u202eevil\u009b31m\u200b',
    });
    expect(jsonLine({ a: '\u0000\u0085' })).toBe('{"a":"\\u0000\\u0085"}\n');
  });
});
