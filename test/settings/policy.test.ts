import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { settingsPortFor } from '../../src-main/core/settings-service/settings-port.ts';
import { memoryLogger } from '../../rigs/memory-logger.ts';
import {
  loadPolicy,
  managedView,
  MAX_POLICY_BYTES,
  policyPath,
  presetDefaults,
  validatePolicy,
} from '../../src-main/core/settings/policy.ts';
import { parseRegQuery, readRegistryPolicy } from '../../src-main/core/settings/registry-policy.ts';
import { posixPolicyTrust, writableByOthers } from '../../src-main/core/settings/policy-trust.ts';
import { SettingsStore } from '../../src-main/core/settings/settings-store.ts';
import { DEFAULT_SETTINGS } from '../../src-main/core/settings/types.ts';
import { useTempDir } from '../support/temp-dir.ts';

const tmp = useTempDir('screenpop-policy-');

const ACME = {
  managedBy: 'Acme IT (helpdesk 4000)',
  settings: {
    baseUrl: 'https://acme.example.com',
    apiKey: 'ak_acme',
    eventSource: 'relay',
    relayUrl: 'wss://relay.acme.example.com',
    relayTenant: 'acme',
    crmAllowedSchemes: ['https', 'salesforce'],
    crmUrlTemplate: 'salesforce://search?q={from}',
    autoOpenCrm: true,
    startAtLogin: true,
    updates: { enabled: false },
    popupCorner: 'top-left',
  },
  locked: [
    'baseUrl',
    'apiKey',
    'eventSource',
    'relayUrl',
    'relayTenant',
    'crmUrlTemplate',
    'crmAllowedSchemes',
    'autoOpenCrm',
    'startAtLogin',
    'updates',
    'demoMode',
  ],
};

describe('policy paths', () => {
  it('one machine-wide file per OS, at a fixed path (never from %ProgramData%)', () => {
    expect(policyPath('win32')).toBe('C:\\ProgramData\\Screenpop\\policy.json');
    expect(policyPath('darwin')).toBe('/Library/Application Support/Screenpop/policy.json');
    expect(policyPath('linux')).toBe('/etc/screenpop/policy.json');
  });
});

describe('validatePolicy', () => {
  it('presets and locks every setting it names, with no per-field code', () => {
    const { policy, problems } = validatePolicy(ACME, '/etc/screenpop/policy.json');
    expect(problems).toEqual([]);
    expect(policy.managedBy).toBe('Acme IT (helpdesk 4000)');
    expect(Object.keys(policy.locked).sort()).toEqual([...ACME.locked].sort());
    expect(policy.locked.updates).toEqual({ enabled: false, channel: 'latest', feedUrl: '' });
    // Named in locked but not given a value: locked at the built-in default.
    expect(policy.locked.demoMode).toBe(false);
    // A preset that is not locked.
    expect(policy.settings.popupCorner).toBe('top-left');
    expect(policy.locked.popupCorner).toBeUndefined();
    // Every setting can be locked (whatever is added to Settings later).
    const all = Object.keys(DEFAULT_SETTINGS).filter((k) => k !== 'version');
    const everything = validatePolicy({ locked: all });
    expect(everything.problems).toEqual([]);
    expect(Object.keys(everything.policy.locked).sort()).toEqual(all.sort());
  });

  it('locks which calls are logged and the note card’s choices (issue 39)', () => {
    const { policy, problems } = validatePolicy({
      settings: { callLogCalls: 'none', callLogChoices: ['Sale', 'No sale'] },
      locked: ['callLogCalls', 'callLogChoices'],
    });
    expect(problems).toEqual([]);
    expect(policy.locked).toEqual({ callLogCalls: 'none', callLogChoices: ['Sale', 'No sale'] });
  });

  it('organisation mode: the relay address and tenant preset and locked; an API key beside it is left out, by name', () => {
    const { policy, problems } = validatePolicy({
      settings: {
        connectionMode: 'organisation',
        relayUrl: 'wss://relay.acme.example.com',
        relayTenant: 'acme',
        apiKey: 'ak_would_reach_every_desktop',
      },
      locked: ['connectionMode', 'relayUrl', 'relayTenant', 'apiKey'],
    });
    expect(policy.locked).toEqual({
      connectionMode: 'organisation',
      relayUrl: 'wss://relay.acme.example.com',
      relayTenant: 'acme',
    });
    expect(policy.settings.apiKey).toBeUndefined();
    expect(problems.map((p) => p.field)).toEqual(['settings.apiKey', 'locked.apiKey']);
    expect(problems[0]?.message).toMatch(/not used in organisation mode/);
    expect(JSON.stringify(problems)).not.toContain('ak_would');
    // The same key in API-key mode is kept (the mode decides, not the key).
    expect(validatePolicy(ACME).policy.locked.apiKey).toBe('ak_acme');
  });

  it('names each bad part, never quotes a value, ignores it and keeps the rest; never throws', () => {
    const secretish = 'hunter2-SECRET-value';
    const { policy, problems } = validatePolicy({
      managedBy: 'x'.repeat(200),
      settings: {
        baseUrl: `http://${secretish}.example.com`,
        apiSecret: secretish,
        extensions: ['101', secretish],
        sound: false,
      },
      locked: ['baseUrl', 'nope', 7, 'sound'],
      onRing: [
        { run: 'relative/prog' },
        { openUrl: `javascript:alert(1)//${secretish}` },
        { run: '/usr/bin/true', args: ['{password}'] },
        { run: 'C:\\Tools\\x.cmd' },
        'weird',
        { openUrl: 'https://intranet.example.com/who?n={from}' },
      ],
      extra: true,
    });
    const fields = problems.map((p) => p.field);
    expect(fields).toEqual(
      expect.arrayContaining([
        'extra',
        'managedBy',
        'settings.baseUrl',
        'settings.apiSecret',
        'settings.extensions[1]',
        'locked[0]',
        'locked[1]',
        'locked[2]',
        'onRing[0].run',
        'onRing[1].openUrl',
        'onRing[2].args[0]',
        'onRing[3].run',
        'onRing[4]',
      ]),
    );
    expect(JSON.stringify(problems)).not.toContain(secretish);
    expect(policy.managedBy).toBe('your administrator');
    expect(policy.settings).toEqual({ extensions: ['101'], sound: false });
    expect(policy.locked).toEqual({ sound: false });
    expect(policy.onRing).toEqual([
      { kind: 'openUrl', url: 'https://intranet.example.com/who?n={from}' },
    ]);
    for (const junk of [null, 3, 'x', [], { settings: 5, locked: {}, onRing: {} }])
      expect(() => validatePolicy(junk)).not.toThrow();
  });
});

describe('loadPolicy', () => {
  it('no file: no policy; broken or unreadable: no policy and an error naming the file', async () => {
    const log = memoryLogger();
    const none = await loadPolicy(join(tmp.path, 'missing.json'), log);
    expect(none.source).toBeNull();
    const bad = join(tmp.path, 'bad.json');
    await writeFile(bad, '{"settings": {');
    expect((await loadPolicy(bad, log)).source).toBeNull();
    expect((await loadPolicy(tmp.path, log)).source).toBeNull(); // a folder in the way
    const errors = log.records.filter((r) => r.level === 'error').map((r) => r.msg);
    expect(errors).toEqual([
      'the policy is not valid JSON; no policy applies',
      'the policy is not a regular file (a FIFO, a device or a folder); no policy applies',
    ]);
  });

  it('a FIFO or a device is refused at once, not waited on; an oversized file is refused', async () => {
    const fifo = join(tmp.path, 'policy.fifo');
    execFileSync('mkfifo', [fifo]);
    const log = memoryLogger();
    // A FIFO nobody writes to: reading it would wait for ever (start-up with it).
    expect((await loadPolicy(fifo, log)).source).toBeNull();
    // A device that never ends.
    expect((await loadPolicy('/dev/zero', log)).source).toBeNull();
    const big = join(tmp.path, 'big.json');
    await writeFile(big, `{"managedBy":"x","pad":"${'a'.repeat(MAX_POLICY_BYTES)}"}`);
    expect((await loadPolicy(big, log)).source).toBeNull();
    expect(log.records.filter((r) => r.level === 'error').map((r) => [r.msg, r.path])).toEqual([
      ['the policy is not a regular file (a FIFO, a device or a folder); no policy applies', fifo],
      [
        'the policy is not a regular file (a FIFO, a device or a folder); no policy applies',
        '/dev/zero',
      ],
      [`the policy file is larger than ${MAX_POLICY_BYTES} bytes; no policy applies`, big],
    ]);
  });

  it('names at most 20 problems one by one, then counts the rest in one line', async () => {
    const path = join(tmp.path, 'noisy.json');
    const junk = Object.fromEntries(Array.from({ length: 40_000 }, (_, i) => [`unknown${i}`, i]));
    await writeFile(path, JSON.stringify({ managedBy: 'Acme IT', ...junk }));
    const log = memoryLogger();
    const policy = await loadPolicy(path, log);
    expect(policy.managedBy).toBe('Acme IT');
    const warnings = log.records.filter((r) => r.level === 'warn');
    expect(warnings).toHaveLength(21);
    expect(warnings.at(-1)).toMatchObject({
      msg: 'more policy problems, not listed one by one; those parts are ignored too',
      more: 40_000 - 20,
    });
  });

  it('logs each bad field by name and applies the good ones', async () => {
    const path = join(tmp.path, 'policy.json');
    await writeFile(
      path,
      JSON.stringify({ settings: { sound: 'loud', startAtLogin: true }, locked: ['startAtLogin'] }),
    );
    const log = memoryLogger();
    const policy = await loadPolicy(path, log);
    expect(policy.locked).toEqual({ startAtLogin: true });
    expect(log.records.filter((r) => r.level === 'warn').map((r) => r.field)).toEqual([
      'settings.sound',
    ]);
  });
});

// Issue 20, item 1: a policy anyone could write applied to every user of the computer.
describe('the machine policy is honoured only from a file no ordinary user could write (POSIX)', () => {
  const isRoot = process.getuid?.() === 0;
  const NOBODY = 65534;
  const policyText = JSON.stringify({ managedBy: 'Planted IT', locked: ['startAtLogin'] });
  const trusted = posixPolicyTrust();

  async function judged(path: string) {
    const log = memoryLogger();
    const policy = await loadPolicy(path, log, { trust: trusted });
    const refusal = log.records.find((r) => r.level === 'error');
    return { applied: policy.source !== null, why: refusal?.why as string | undefined, refusal };
  }

  it('the rule: owned by root, writable by no other user (group 0 may)', () => {
    expect(writableByOthers('f', { uid: 0, gid: 0, mode: 0o100644 })).toBeNull();
    expect(writableByOthers('f', { uid: 0, gid: 0, mode: 0o100664 })).toBeNull();
    expect(writableByOthers('f', { uid: 0, gid: 20, mode: 0o100664 })).toBe(
      'f is writable by group 20',
    );
    expect(writableByOthers('f', { uid: 0, gid: 0, mode: 0o40777 })).toBe(
      'f is writable by every user',
    );
    expect(writableByOthers('f', { uid: 0, gid: 0, mode: 0o41777 })).toBe(
      'f is writable by every user',
    );
    expect(writableByOthers('f', { uid: 1000, gid: 0, mode: 0o100600 })).toBe(
      'f is owned by user 1000, not by root',
    );
  });

  it.skipIf(isRoot)('a file of this (ordinary) user is ignored, saying why', async () => {
    const path = join(tmp.path, 'policy.json');
    await writeFile(path, policyText);
    const r = await judged(path);
    expect(r.applied).toBe(false);
    expect(r.why).toBe(
      `the policy file ${path} is owned by user ${process.getuid!()}, not by root`,
    );
  });

  // Real files, owners and modes (root can make another user's file): skipped with a warning
  // otherwise. The tree is under root's home (root's, 0700): /tmp (1777) fails the rule itself.
  if (!isRoot) console.warn('policy trust with other owners skipped: needs root (chown)');
  describe.runIf(isRoot)('as root, with real owners and modes', () => {
    let base: string;
    let folder: string;
    let path: string;
    beforeEach(async () => {
      base = mkdtempSync(join(homedir(), '.screenpop-policy-trust-'));
      chmodSync(base, 0o755);
      folder = join(base, 'Screenpop');
      mkdirSync(folder, { mode: 0o755 });
      path = join(folder, 'policy.json');
      await writeFile(path, policyText, { mode: 0o644 });
    });
    afterEach(() => rmSync(base, { recursive: true, force: true }));

    it('applies a root-owned file in root-owned folders nobody else may write', async () => {
      expect((await judged(path)).applied).toBe(true);
      chmodSync(path, 0o664); // group root may write: as sudo allows
      expect((await judged(path)).applied).toBe(true);
    });

    it('ignores a file another user owns, or a group or everyone may write, and says why', async () => {
      chownSync(path, NOBODY, 0);
      const r = await judged(path);
      expect(r.applied).toBe(false);
      expect(r.refusal?.msg).toBe(
        'the policy file could have been written by a user who is not an administrator; it is ignored',
      );
      expect(r.why).toBe(`the policy file ${path} is owned by user ${NOBODY}, not by root`);
      chownSync(path, 0, NOBODY);
      chmodSync(path, 0o664);
      expect((await judged(path)).why).toBe(
        `the policy file ${path} is writable by group ${NOBODY}`,
      );
      chownSync(path, 0, 0);
      chmodSync(path, 0o646);
      expect((await judged(path)).why).toBe(`the policy file ${path} is writable by every user`);
    });

    it('ignores a root-owned file in a folder another user owns or anyone may write to', async () => {
      chownSync(folder, NOBODY, 0);
      expect((await judged(path)).why).toBe(
        `the folder ${folder} is owned by user ${NOBODY}, not by root`,
      );
      chownSync(folder, 0, 0);
      chmodSync(folder, 0o1777); // sticky or not: anyone could have planted it
      expect((await judged(path)).why).toBe(`the folder ${folder} is writable by every user`);
      chmodSync(folder, 0o755);
      chmodSync(base, 0o777); // a folder further up counts as much
      expect((await judged(path)).why).toBe(`the folder ${base} is writable by every user`);
    });

    it('judges where a link leads: a trusted folder linking into one anyone may write is not trusted', async () => {
      const open = join(base, 'open');
      mkdirSync(open, { mode: 0o755 });
      chmodSync(open, 0o777);
      const planted = join(open, 'policy.json');
      await writeFile(planted, policyText, { mode: 0o644 });
      rmSync(path);
      symlinkSync(planted, path);
      expect((await judged(path)).why).toBe(`the folder ${open} is writable by every user`);
    });
  });
});

describe('settings under a policy', () => {
  async function managedPort(userFile?: object) {
    const path = join(tmp.path, 'settings.json');
    if (userFile) await writeFile(path, JSON.stringify({ ...DEFAULT_SETTINGS, ...userFile }));
    const { policy } = validatePolicy(ACME, '/etc/screenpop/policy.json');
    const store = new SettingsStore({
      path,
      logger: memoryLogger(),
      defaults: presetDefaults(policy),
    });
    return { port: settingsPortFor(store, memoryLogger(), policy), store, policy };
  }

  it('first run starts from the presets; locked settings win over the user file', async () => {
    const first = await managedPort();
    const s = await first.port.load();
    expect(s.popupCorner).toBe('top-left');
    expect(s.baseUrl).toBe('https://acme.example.com');
    const { port } = await managedPort({
      baseUrl: 'https://evil.example.net',
      popupCorner: 'bottom-left',
      extensions: ['205'],
    });
    const loaded = await port.load();
    expect(loaded.baseUrl).toBe('https://acme.example.com');
    expect(loaded.updates.enabled).toBe(false);
    // Not locked: the user's choice stands.
    expect(loaded.popupCorner).toBe('bottom-left');
    expect(loaded.extensions).toEqual(['205']);
  });

  it('the user still saves what is not locked; a locked field in a patch changes nothing', async () => {
    const { port, store, policy } = await managedPort();
    await port.load();
    const saved = await port.update({
      extensions: ['101', '102'],
      baseUrl: 'https://elsewhere.example.org',
      updates: { enabled: true, channel: 'beta', feedUrl: '' },
    });
    expect(saved.ok).toBe(true);
    if (!saved.ok) return;
    expect(saved.settings.extensions).toEqual(['101', '102']);
    expect(saved.settings.baseUrl).toBe('https://acme.example.com');
    expect(saved.settings.updates.enabled).toBe(false);
    expect(store.settings().baseUrl).toBe('https://acme.example.com'); // the preset, untouched
    expect(managedView(policy)).toEqual({ by: 'Acme IT (helpdesk 4000)', locked: ACME.locked });
  });
});

describe('Windows registry policy (reg.exe through execFile)', () => {
  const OUTPUT = [
    '',
    'HKEY_LOCAL_MACHINE\\SOFTWARE\\Policies\\Screenpop',
    '    Policy    REG_SZ    {"managedBy": "Acme IT", "locked": ["startAtLogin"], "settings": {"startAtLogin": true}}',
    '',
  ].join('\r\n');

  it('reads the Policy value from reg query output, with reg.exe by full path and no shell', async () => {
    expect(parseRegQuery(OUTPUT)).toBe(
      '{"managedBy": "Acme IT", "locked": ["startAtLogin"], "settings": {"startAtLogin": true}}',
    );
    expect(
      parseRegQuery(
        '\r\nHKEY_LOCAL_MACHINE\\SOFTWARE\\Policies\\Screenpop\r\n    Other    REG_SZ    x\r\n',
      ),
    ).toBeNull();
    const calls: Array<[string, string[]]> = [];
    const text = await readRegistryPolicy(async (file, args) => {
      calls.push([file, args]);
      return OUTPUT;
    });
    expect(text).toContain('Acme IT');
    expect(calls).toEqual([
      [
        // Fixed, never from %SystemRoot% (a user may point that at a reg.exe of their own).
        'C:\\Windows\\System32\\reg.exe',
        ['query', 'HKLM\\SOFTWARE\\Policies\\Screenpop', '/v', 'Policy', '/reg:64'],
      ],
    ]);
    // No key or value: reg.exe exits 1.
    const none = await readRegistryPolicy(() =>
      Promise.reject(Object.assign(new Error('x'), { code: 1 })),
    );
    expect(none).toBeNull();
  });

  it('the registry comes first; without it, or when reg.exe fails, the file applies', async () => {
    const path = join(tmp.path, 'policy.json');
    await writeFile(path, JSON.stringify({ managedBy: 'File IT' }));
    const log = memoryLogger();
    const fromRegistry = await loadPolicy(path, log, {
      registry: async () => parseRegQuery(OUTPUT),
    });
    expect(fromRegistry.managedBy).toBe('Acme IT');
    expect(fromRegistry.locked).toEqual({ startAtLogin: true });
    expect(fromRegistry.source).toContain('HKLM');
    expect((await loadPolicy(path, log, { registry: async () => null })).managedBy).toBe('File IT');
    const failed = await loadPolicy(path, log, { registry: async () => new Error('spawn EACCES') });
    expect(failed.managedBy).toBe('File IT');
    expect(log.records.map((r) => r.msg)).toContain(
      'the registry policy could not be read; the policy file is used',
    );
  });
});
