import { describe, expect, it } from 'vitest';
import { Directory, type DirectoryEntry } from '../../src-main/core/contacts/directory.ts';
import { formatNumber, numberKey } from '../../src-main/core/numbers/phone-number.ts';
import { silentLogger } from '../../src-shared/process/log.ts';
import { FakeClock } from '../../rigs/fake-clock.ts';

function makeDirectory(
  fetchExtensions: () => Promise<DirectoryEntry[]>,
  files: Record<string, string> = {},
) {
  const clock = new FakeClock();
  const dir = new Directory({
    clock,
    logger: silentLogger,
    fetchExtensions,
    defaultRegion: 'US',
    refreshMs: 15 * 60_000,
    retryMinMs: 30_000,
    readFile: async (p) => {
      const t = files[p];
      if (t === undefined) throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
      return new TextEncoder().encode(t);
    },
  });
  return { clock, dir };
}

describe('phone numbers', () => {
  it('normalizes the same number written differently to one key', () => {
    expect(numberKey('(415) 555-0123', 'US')).toBe('+14155550123');
    expect(numberKey('+1 415 555 0123', 'US')).toBe('+14155550123');
    expect(numberKey('020 7946 0958', 'GB')).toBe('+442079460958');
    expect(numberKey('101', 'US')).toBe('ext:101');
    expect(numberKey('anonymous', 'US')).toBeNull();
  });

  it('formats for reading', () => {
    expect(formatNumber('+14155550123', 'US')).toBe('(415) 555-0123');
    expect(formatNumber('+442079460958', 'US')).toBe('+44 20 7946 0958');
    expect(formatNumber('101', 'US')).toBe('101');
    expect(formatNumber('\u202E<b>1</b>', 'US')).toBe('<b>1</b>');
    // Caller text too long to show is cut, and says so.
    expect(formatNumber('9'.repeat(64), 'US')).toBe('9'.repeat(64));
    expect(formatNumber('9'.repeat(300), 'US')).toBe(`${'9'.repeat(63)}…`);
  });
});

describe('Directory', () => {
  it('firstLoad waits for the first extension list since start, at most the given time', async () => {
    let answer!: (list: DirectoryEntry[]) => void;
    const { clock, dir } = makeDirectory(
      () => new Promise<DirectoryEntry[]>((resolve) => (answer = resolve)),
    );
    dir.start();
    let waited = false;
    const first = dir.firstLoad(1_000).then(() => (waited = true));
    await clock.advance(999);
    expect(waited).toBe(false);
    await clock.advance(1);
    await first;
    expect(dir.lookup('102')).toBeNull(); // not loaded yet: the caller goes on without the name

    const second = dir.firstLoad(60_000);
    answer([{ number: '102', callerIdName: 'Ada Lovelace' }]);
    await second; // the list landed long before the minute
    expect(clock.pendingTimers()).toBe(1); // only the next refresh: the wait's timer is gone
    expect(dir.lookup('102')).toBe('Ada Lovelace');
    await dir.firstLoad(60_000); // loaded: no wait at all
    dir.stop();
  });

  it('names callers from the extension list and the contacts file', async () => {
    const { dir } = makeDirectory(async () => [{ number: '102', callerIdName: 'Ada Lovelace' }], {
      '/c.csv': 'name,number\nBob Builder,(415) 555-0123\n',
    });
    dir.start();
    await dir.refreshNow();
    await dir.loadContactsFile('/c.csv');
    expect(dir.lookup('102')).toBe('Ada Lovelace');
    expect(dir.lookup('+14155550123')).toBe('Bob Builder');
    expect(dir.lookup('+14155550000')).toBeNull();
    dir.stop();
  });

  it('refreshes in the background and keeps the last list when a refresh fails, retrying with back-off', async () => {
    let calls = 0;
    let fail = false;
    let name = 'First';
    const { clock, dir } = makeDirectory(async () => {
      calls++;
      if (fail) throw new Error('network down');
      return [{ number: '101', callerIdName: name }];
    });
    dir.start();
    await clock.advance(0);
    expect(calls).toBe(1);
    expect(dir.lookup('101')).toBe('First');

    fail = true;
    await clock.advance(15 * 60_000);
    expect(calls).toBe(2);
    expect(dir.lookup('101')).toBe('First');
    await clock.advance(30_000);
    expect(calls).toBe(3);
    await clock.advance(30_000); // second retry waits 60 s
    expect(calls).toBe(3);
    await clock.advance(30_000);
    expect(calls).toBe(4);

    fail = false;
    name = 'Second';
    await clock.advance(120_000);
    expect(calls).toBe(5);
    expect(dir.lookup('101')).toBe('Second');
    dir.stop();
    await clock.advance(60 * 60_000);
    expect(calls).toBe(5);
  });

  it('after stop() and start() fetches anew and ignores a list still in flight from before', async () => {
    const pending: Array<(list: DirectoryEntry[]) => void> = [];
    const { clock, dir } = makeDirectory(() => new Promise((resolve) => pending.push(resolve)));
    dir.start();
    dir.stop(); // the connection changed while the old list was loading
    dir.start();
    expect(pending).toHaveLength(2);
    pending[1]?.([{ number: '101', callerIdName: 'New tenant' }]);
    await clock.advance(0);
    pending[0]?.([{ number: '101', callerIdName: 'Old tenant' }]);
    await clock.advance(0);
    expect(dir.lookup('101')).toBe('New tenant');
    dir.forgetExtensions();
    expect(dir.lookup('101')).toBeNull();
    dir.stop();
  });

  it('treats an unreadable contacts file as no contacts', async () => {
    const { dir } = makeDirectory(async () => []);
    expect(await dir.loadContactsFile('/missing.vcf')).toEqual({
      ok: false,
      problem: { kind: 'unreadable' },
    });
  });

  it('never lets the contacts file rename a colleague, and says where each name came from', async () => {
    const { dir } = makeDirectory(async () => [{ number: '102', callerIdName: 'Ada Lovelace' }], {
      '/c.csv':
        'First Name,Last Name,Company,Mobile Phone,Business Phone\n' +
        'Bob,Builder,Builder & Co,(415) 555-0123,102\n',
    });
    dir.start();
    await dir.refreshNow();
    expect(await dir.loadContactsFile('/c.csv')).toEqual({ ok: true, count: 2 });
    expect(dir.identify('102')).toEqual({
      name: 'Ada Lovelace',
      source: 'directory',
      company: null,
      numberKind: null,
    });
    expect(dir.identify('+1 415 555 0123')).toEqual({
      name: 'Bob Builder',
      source: 'contacts',
      company: 'Builder & Co',
      numberKind: 'mobile',
    });
    dir.stop();
  });

  it('says why a file gave nothing, and then has no contacts', async () => {
    const { dir } = makeDirectory(async () => [], {
      '/good.csv': 'Name,Phone\nBob,(415) 555-0123\n',
      '/emails.csv': 'Name,E-mail Address\nBob,bob@example.com\n',
    });
    await dir.loadContactsFile('/good.csv');
    expect(dir.lookup('+14155550123')).toBe('Bob');
    expect(await dir.inspectContactsFile('/emails.csv')).toEqual({
      ok: false,
      problem: { kind: 'no-phone-column', columns: ['Name', 'E-mail Address'] },
    });
    expect(dir.lookup('+14155550123')).toBe('Bob'); // inspecting changes nothing
    expect(await dir.loadContactsFile('/emails.csv')).toMatchObject({ ok: false });
    expect(dir.lookup('+14155550123')).toBeNull();
  });
});
