/**
 * The directory indexes its name sources in slices on the clock (INDEX_SLICE_MS /
 * INDEX_SLICE_ENTRIES) and swaps a finished index in whole: a ring during a refresh of 20,000
 * company contacts, or while a large contacts file is indexed, pops at once; lookups answer from
 * the last index until the new one is ready. Driven on the fake clock: the slices run when it
 * advances, so the order of events is the test, not the time things take.
 */
import { describe, expect, it } from 'vitest';
import { Directory } from '../../src-main/core/contacts/directory.ts';
import type { PbxContact } from '../../src-shared/api/pbx-lists.ts';
import { silentLogger } from '../../src-shared/process/log.ts';
import { FakeClock, flushMicrotasks } from '../../rigs/fake-clock.ts';
import { presenterHarness } from '../../rigs/app-harness.ts';

const COMPANY_CONTACTS = 20_000;

/** Company contacts as the Yeastar decoder hands them over: a work and a mobile number each. */
function companyContacts(name: (i: number) => string, count = COMPANY_CONTACTS): PbxContact[] {
  return Array.from({ length: count }, (_, i) => ({
    name: name(i),
    company: 'Harbour',
    numbers: [
      { number: workNumber(i), kind: 'work' as const },
      { number: `+1650${String(3_000_000 + i)}`, kind: 'mobile' as const },
    ],
  }));
}
const workNumber = (i: number) => `+1415${String(3_000_000 + i)}`;

function setUp(options: {
  contacts?: () => Promise<PbxContact[]>;
  files?: Record<string, string>;
}) {
  const clock = new FakeClock();
  const directory = new Directory({
    clock,
    logger: silentLogger,
    fetchExtensions: async () => [{ number: '101', callerIdName: 'Front desk' }],
    ...(options.contacts ? { fetchPbxContacts: options.contacts } : {}),
    defaultRegion: 'US',
    readFile: async (path) => new TextEncoder().encode(options.files?.[path] ?? ''),
  });
  const { presenter, notifier, pop } = presenterHarness({ clock, directory });
  const events: string[] = [];
  directory.onChange(() => {
    events.push('names changed');
    presenter.refreshNames();
  });
  let seq = 0;
  const ring = (from: string) => {
    const callId = `c${++seq}`;
    presenter.handlePop(pop(callId, from));
    events.push(`popped ${callId}`);
    return callId;
  };
  const card = (callId: string) => presenter.cards().find((c) => c.callId === callId);
  return { clock, directory, notifier, ring, card, events };
}

describe('the directory indexes in slices and never holds up a ring', () => {
  it('a ring while 20,000 company contacts are first indexed pops at once, unnamed; the card is named when the index is ready', async () => {
    const t = setUp({ contacts: async () => companyContacts((i) => `Contact ${i}`) });
    const refreshing = t.directory.refreshNow();
    let refreshed = false;
    void refreshing.then(() => (refreshed = true));
    await flushMicrotasks(); // the lists have landed; the first slice of the index is done
    expect(t.directory.lookup('101')).toBe('Front desk'); // a short list fits in one slice
    expect(refreshed).toBe(false);
    expect(t.directory.pbxContactCount).toBe(0); // no half-built index is seen

    const callId = t.ring(workNumber(19_999));
    expect(t.notifier.shown).toHaveLength(1);
    expect(t.notifier.shown[0]?.card).toMatchObject({
      callId,
      callerName: null,
      nameSource: 'none',
    });

    await t.clock.advance(0); // the remaining slices
    await refreshing;
    expect(t.directory.pbxContactCount).toBe(2 * COMPANY_CONTACTS);
    expect(t.card(callId)).toMatchObject({
      callerName: 'Contact 19999',
      callerCompany: 'Harbour',
      nameSource: 'pbx-contacts',
    });
    expect(t.events.indexOf(`popped ${callId}`)).toBeLessThan(
      t.events.lastIndexOf('names changed'),
    );
    t.directory.stop();
  });

  it('during a refresh lookups answer from the last index, and the new one replaces it whole', async () => {
    let list = companyContacts((i) => `Old ${i}`);
    const t = setUp({ contacts: async () => list });
    const first = t.directory.refreshNow();
    await t.clock.advance(0);
    await first;
    expect(t.directory.lookup(workNumber(0))).toBe('Old 0');

    // The PBX renamed everyone, and the last contact is gone.
    list = companyContacts((i) => `New ${i}`, COMPANY_CONTACTS - 1);
    const second = t.directory.refreshNow();
    await flushMicrotasks(); // the first slice (the first contacts, already renamed) is done
    expect(t.directory.lookup(workNumber(0))).toBe('Old 0');
    expect(t.directory.lookup(workNumber(COMPANY_CONTACTS - 1))).toBe(
      `Old ${COMPANY_CONTACTS - 1}`,
    );
    expect(t.directory.pbxContactCount).toBe(2 * COMPANY_CONTACTS);
    const callId = t.ring(workNumber(5));
    expect(t.card(callId)?.callerName).toBe('Old 5');

    await t.clock.advance(0);
    await second;
    expect(t.directory.lookup(workNumber(0))).toBe('New 0');
    expect(t.directory.lookup(workNumber(COMPANY_CONTACTS - 2))).toBe(
      `New ${COMPANY_CONTACTS - 2}`,
    );
    expect(t.directory.lookup(workNumber(COMPANY_CONTACTS - 1))).toBeNull();
    expect(t.directory.pbxContactCount).toBe(2 * (COMPANY_CONTACTS - 1));
    expect(t.card(callId)?.callerName).toBe('Old 5'); // a card keeps the name it popped with
    t.directory.stop();
  });

  it('a large contacts file: the load answers once the file is read, the index follows, a ring meanwhile pops', async () => {
    const rows = Array.from(
      { length: COMPANY_CONTACTS },
      (_, i) => `Person ${i},${workNumber(i)},+1650${String(3_000_000 + i)}`,
    );
    const t = setUp({
      files: {
        '/big.csv': `Name,Mobile Phone,Business Phone\n${rows.join('\n')}\n`,
        '/emails.csv': 'Name,E-mail Address\nBob,bob@example.com\n',
      },
    });
    expect(await t.directory.loadContactsFile('/big.csv')).toEqual({
      ok: true,
      count: 2 * COMPANY_CONTACTS,
    });
    expect(t.directory.contactCount).toBe(0); // being indexed
    const callId = t.ring(workNumber(7));
    expect(t.notifier.shown[0]?.card).toMatchObject({ callId, callerName: null });
    let loaded = false;
    const waiting = t.directory.firstLoad(60_000).then(() => (loaded = true));
    await flushMicrotasks();
    expect(loaded).toBe(false); // the runner's first pop waits (on the clock) for these names

    await t.clock.advance(0);
    await waiting;
    expect(t.directory.contactCount).toBe(2 * COMPANY_CONTACTS);
    expect(t.card(callId)).toMatchObject({ callerName: 'Person 7', nameSource: 'contacts' });
    // A file that gives nothing is still said by the load itself (the runner's usage error).
    expect(await t.directory.loadContactsFile('/emails.csv')).toMatchObject({ ok: false });
    expect(t.directory.lookup(workNumber(7))).toBeNull();
    t.directory.stop();
  });
});
