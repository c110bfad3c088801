import { execFile } from 'node:child_process';
import { chmod, chown, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  SettingsStore,
  SettingsValidationError,
} from '../../src-main/core/settings/settings-store.ts';
import { DEFAULT_SETTINGS } from '../../src-main/core/settings/types.ts';
import { memoryLogger } from '../../rigs/memory-logger.ts';
import { useTempDir } from '../support/temp-dir.ts';

const tmp = useTempDir('screenpop-settings-');
let path: string;
const NOW = Date.UTC(2026, 10, 22, 9, 30, 0);

beforeEach(() => {
  path = join(tmp.path, 'settings.json');
});

const store = (logger = memoryLogger()) => new SettingsStore({ path, logger, now: () => NOW });
const backups = async () =>
  (await readdir(tmp.path)).filter((f) => f.startsWith('settings.json.bad-'));
const asRoot = process.getuid?.() === 0;
/** nobody's and nogroup's id on Debian (and most Linux systems). */
const NOBODY = 65534;

/**
 * SettingsStore.load() of `file` in a child process that is not root: when this process is root,
 * the child imports the store (the sources may sit where only root reads, as in CI's clone), then
 * drops to `nobody` (setgroups, setgid, setuid) before it loads. Answers what load() answered.
 */
async function loadAsUnprivileged(file: string) {
  const store = new URL('../../src-main/core/settings/settings-store.ts', import.meta.url).href;
  const script = `
    const { SettingsStore } = await import(${JSON.stringify(store)});
    if (process.getuid() === 0) {
      process.setgroups([${NOBODY}]);
      process.setgid(${NOBODY});
      process.setuid(${NOBODY});
    }
    const logger = { debug() {}, info() {}, warn() {}, error() {}, child() { return logger; } };
    const r = await new SettingsStore({ path: ${JSON.stringify(file)}, logger, now: () => 0 }).load();
    process.stdout.write(JSON.stringify({ uid: process.getuid(), ...r }));`;
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--input-type=module', '-e', script],
    { timeout: 20_000 },
  );
  return JSON.parse(stdout) as {
    uid: number;
    settings: unknown;
    problems: { message: string }[];
  };
}

const onDisk = async () => JSON.parse(await readFile(path, 'utf8')) as Record<string, unknown>;

describe('SettingsStore', () => {
  it('first run (no file): defaults, no problems, nothing written', async () => {
    const r = await store().load();
    expect(r).toEqual({ settings: DEFAULT_SETTINGS, problems: [] });
    expect(await readdir(tmp.path)).toEqual([]);
  });

  it('saves and loads back the same settings, atomically (no temp files left)', async () => {
    const s = store();
    await s.load();
    const settings = {
      ...DEFAULT_SETTINGS,
      baseUrl: 'https://acme.example.com',
      extensions: ['101'],
    };
    await s.save(settings);
    expect(await readdir(tmp.path)).toEqual(['settings.json']);
    expect((await store().load()).settings).toEqual(settings);
  });

  it('a corrupt file: clear message, a backup copy, defaults, and no crash', async () => {
    await writeFile(path, '{"baseUrl": "https://acme.example.com", "sound": tru');
    const r = await store().load();
    expect(r.settings).toEqual(DEFAULT_SETTINGS);
    expect(r.problems).toHaveLength(1);
    expect(r.problems[0]?.field).toBe('(file)');
    expect(r.problems[0]?.message).toMatch(/settings\.json is not valid JSON/);
    const [backup] = await backups();
    expect(backup).toBe('settings.json.bad-2026-11-22T09-30-00-000Z');
    expect(r.problems[0]?.message).toContain(backup);
    expect(await readFile(join(tmp.path, backup!), 'utf8')).toContain('"sound": tru');
    // the file is usable again: the next start has no problem
    expect((await store().load()).problems).toEqual([]);
  });

  it('a corrupt file: the message and the log say where, never what the file says there', async () => {
    // A hand-edited secret, unquoted: JSON.parse's own message would quote the text around it.
    await writeFile(path, '{"apiKey": "k3y",\n "apiSecret": Sup3rS3cretValue}');
    const logger = memoryLogger();
    const r = await store(logger).load();
    expect(r.problems[0]?.message).toMatch(/settings\.json is not valid JSON/);
    const said = [r.problems[0]?.message, JSON.stringify(logger.records)].join('\n');
    expect(said).not.toMatch(/Sup3r|S3cret/);
  });

  it('a hand-edited file with a bad field keeps the good ones and names the bad one', async () => {
    await writeFile(
      path,
      JSON.stringify({ baseUrl: 'https://acme.example.com', popupLingerSec: 'four', sound: false }),
    );
    const logger = memoryLogger();
    const r = await store(logger).load();
    expect(r.settings).toMatchObject({
      baseUrl: 'https://acme.example.com',
      sound: false,
      popupLingerSec: 4,
    });
    expect(r.problems.map((p) => p.field)).toEqual(['popupLingerSec', '(file)']);
    expect(r.problems[0]?.message).toMatch(/popupLingerSec must be a whole number/);
    expect(await backups()).toHaveLength(1);
    expect(await onDisk()).toMatchObject({ popupLingerSec: 4, sound: false });
    expect(logger.records.some((rec) => rec.field === 'popupLingerSec')).toBe(true);
  });

  it('a secret pasted into a list field never reaches the log or the messages', async () => {
    const secret = 'sk_live_Zr8QpV2mXy7wT4nK';
    await writeFile(path, JSON.stringify({ extensions: ['101', secret] }));
    const logger = memoryLogger();
    const r = await store(logger).load();
    expect(r.settings.extensions).toEqual(['101']);
    expect(r.problems[0]?.field).toBe('extensions[1]');
    expect(JSON.stringify([r.problems, logger.records])).not.toContain(secret.slice(0, 8));
  });

  it('a secret found in the file is removed from it, and from the backup', async () => {
    await writeFile(
      path,
      JSON.stringify({
        apiKey: 'sk_abc',
        apiSecret: 'ss_do-not-keep-me',
        baseUrl: 'https://u:pw-leak@acme.example.com',
      }),
    );
    const r = await store().load();
    expect(r.problems.map((p) => p.field)).toEqual(['apiSecret', 'baseUrl', '(file)']);
    const files = await readdir(tmp.path);
    for (const f of files) {
      const text = await readFile(join(tmp.path, f), 'utf8');
      expect(text, f).not.toContain('ss_do-not-keep-me');
      expect(text, f).not.toContain('pw-leak');
    }
    expect(await onDisk()).toMatchObject({ apiKey: 'sk_abc', baseUrl: '' });
    expect(JSON.stringify(r.problems)).not.toContain('ss_do-not-keep-me');
  });

  it('a secret nested deep in a hand-edited file does not reach the backup either', async () => {
    let nested: Record<string, unknown> = { apiSecret: 'ss_deep-do-not-keep' };
    for (let i = 0; i < 12; i++) nested = { more: nested };
    await writeFile(path, JSON.stringify({ apiKey: 'sk_abc', extra: nested }));
    await store().load();
    const [backup] = await backups();
    expect(await readFile(join(tmp.path, backup!), 'utf8')).not.toContain('ss_deep-do-not-keep');
  });

  it('an unreadable path gives a problem, not a crash, and is not overwritten', async () => {
    await mkdir(path); // a folder where the file should be
    const r = await store().load();
    expect(r.settings).toEqual(DEFAULT_SETTINGS);
    expect(r.problems[0]?.message).toMatch(/could not be read \(EISDIR\)/);
  });

  it('update() validates, writes, and throws SettingsValidationError naming the field', async () => {
    const s = store();
    await s.load();
    const updated = await s.update({ baseUrl: 'https://acme.example.com/', extensions: ['101'] });
    expect(updated.baseUrl).toBe('https://acme.example.com');
    expect(await onDisk()).toMatchObject({
      baseUrl: 'https://acme.example.com',
      extensions: ['101'],
    });
    const err = await s.update({ baseUrl: 'http://acme.example.com' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SettingsValidationError);
    expect(err).toMatchObject({ field: 'baseUrl' });
    expect((err as Error).message).toMatch(/https:\/\//);
    expect((await onDisk()).baseUrl).toBe('https://acme.example.com'); // unchanged
    expect(s.check({ popupCorner: 'nowhere' as never })).toMatchObject({
      ok: false,
      field: 'popupCorner',
    });
  });

  it('concurrent updates are applied in order and none is lost', async () => {
    const s = store();
    await s.load();
    await Promise.all([
      s.update({ sound: false }),
      s.update({ doNotDisturb: true }),
      s.update({ historyLimit: 10 }),
    ]);
    expect(await onDisk()).toMatchObject({ sound: false, doNotDisturb: true, historyLimit: 10 });
  });

  it('save() refuses invalid settings', async () => {
    const s = store();
    await expect(s.save({ ...DEFAULT_SETTINGS, staleRingSec: 0 })).rejects.toMatchObject({
      field: 'staleRingSec',
    });
    expect(await readdir(tmp.path)).toEqual([]);
  });

  // A read-only folder means nothing to root (root writes anyway), and CI runs as root: the
  // scenario runs in a child process that drops to `nobody` when this test runs as root, so it
  // runs (and can fail) in CI too instead of being skipped there.
  it('a read-only folder: problems reported, the app keeps going (as an unprivileged user)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'screenpop-settings-ro-'));
    try {
      const file = join(dir, 'settings.json');
      await writeFile(file, '{not json');
      if (asRoot) await chown(dir, NOBODY, NOBODY).then(() => chown(file, NOBODY, NOBODY));
      await chmod(dir, 0o500);
      const r = await loadAsUnprivileged(file);
      expect(r.uid).not.toBe(0);
      expect(r.settings).toEqual(DEFAULT_SETTINGS);
      expect(r.problems[0]?.message).toMatch(/could not be kept/);
      expect(await readFile(file, 'utf8')).toBe('{not json');
    } finally {
      await chmod(dir, 0o700);
      await rm(dir, { recursive: true, force: true });
    }
  });
});
