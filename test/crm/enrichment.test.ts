/**
 * The CRM lookup in the app: AppRuntime wired as the Electron app wires it, the simulator ringing
 * over real sockets, the fake HubSpot over HTTPS through the app's transport. The card pops first
 * and is filled in when HubSpot answers; a colleague is never looked up; a contacts-file name stays.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { serviceConnectionFactory } from '../../src-main/core/connection/connection.ts';
import { AppRuntime } from '../../src-main/core/app/runtime.ts';
import type { CallCard } from '../../src-main/core/ports/views.ts';
import { crmKeychainAccount } from '../../src-main/core/crm/build.ts';
import {
  keychainAccount,
  MemoryCredentialStore,
} from '../../src-main/core/credentials/credential-store.ts';
import { transportFor } from '../../src-main/core/net/network.ts';
import { DEFAULT_SETTINGS } from '../../src-main/core/settings/types.ts';
import { systemClock } from '../../src-shared/process/clock.ts';
import { SecretRegistry, silentLogger } from '../../src-shared/process/log.ts';
import { startSimulator } from '../../src-sim/index.ts';
import { certToolsAvailable, makeTestCa, type CertFiles, type TestCa } from '../../rigs/certs.ts';
import { startFakeHubSpot } from '../../rigs/fake-hubspot.ts';
import {
  FakePopup,
  fakeViews,
  memoryHistory,
  MemorySettings,
  RecordingCallLog,
} from '../../rigs/app-harness.ts';
import { directTransport } from '../../rigs/direct-transport.ts';

const canRun = certToolsAvailable('test/crm/enrichment.test.ts');
const TOKEN = 'pat-na1-enrich-test';

/** Every set of cards the popup was shown, in order (copies). */
class RecordingPopup extends FakePopup {
  seen: CallCard[][] = [];
  override show(cards: CallCard[]): void {
    super.show(cards);
    this.seen.push(structuredClone(cards));
  }
}

let dir = '';
let ca: TestCa;
let cert: CertFiles;
const cleanups: Array<() => Promise<void> | void> = [];
beforeAll(() => {
  if (!canRun) return;
  dir = mkdtempSync(join(tmpdir(), 'crm-enrich-'));
  ca = makeTestCa(dir);
  cert = ca.issue('hubspot');
});
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!canRun)('CRM lookup in the app', () => {
  it('pops at once, then fills the card and the history with what HubSpot answers', async () => {
    const sim = await startSimulator({ extensions: 6 });
    cleanups.push(() => sim.close());
    const hubspot = await startFakeHubSpot({
      cert: cert.cert,
      key: cert.key,
      tokens: { [TOKEN]: ['crm.objects.contacts.read'] },
    });
    cleanups.push(() => hubspot.close());
    hubspot.delayMs = 300; // HubSpot takes its time; the pop must not.
    const ada = hubspot.addContact({
      firstname: 'Ada',
      lastname: 'Lovelace',
      company: 'Analytical Engines',
      phone: '+14155550123',
    });
    hubspot.addContact({ firstname: 'Robert', lastname: 'Builder', phone: '+14155550177' });
    const colleague = sim.extensions.find((e) => e.number !== '101')!;
    hubspot.addContact({ firstname: 'Not', lastname: 'Colleague', phone: colleague.number });
    const contacts = join(dir, 'contacts.csv');
    writeFileSync(contacts, 'Name,Mobile Phone\nBob the Builder,(415) 555-0177\n');

    const crmLookup = { ...DEFAULT_SETTINGS.crmLookup, provider: 'hubspot' as const };
    const credentials = new MemoryCredentialStore();
    await credentials.setSecret(keychainAccount(sim.apiKey.key, sim.baseUrl), sim.apiKey.secret);
    await credentials.setSecret(crmKeychainAccount(crmLookup, hubspot.url) ?? '', TOKEN);
    const settings = new MemorySettings({
      baseUrl: sim.baseUrl,
      apiKey: sim.apiKey.key,
      extensions: ['101'],
      contactsFile: contacts,
      caFile: ca.caFile,
      proxyMode: 'none',
      crmLookup,
      callLogCalls: 'answered-and-missed',
      popupLingerSec: 1,
    });
    // The far side of the call log (the durable queue): what the app hands it per call.
    const callLog = new RecordingCallLog();
    const secrets = new SecretRegistry();
    const views = { ...fakeViews(), popup: new RecordingPopup() };
    const history = memoryHistory(systemClock);
    const runtime = new AppRuntime({
      clock: systemClock,
      logger: silentLogger,
      secrets,
      settings,
      credentials,
      history,
      views,
      connect: serviceConnectionFactory({
        clock: systemClock,
        logger: silentLogger,
        secrets,
        transport: () => directTransport({ secrets }),
      }),
      startDemo: () => Promise.reject(new Error('no demo here')),
      createProbe: () => {
        throw new Error('not used');
      },
      crmNetwork: (s) =>
        transportFor(s, {
          logger: silentLogger,
          secrets,
          readFile: (p) => readFileSync(p, 'utf8'),
        }),
      hubspotApi: hubspot.url,
      callLog,
    });
    cleanups.push(() => runtime.shutdown());
    await runtime.start();
    await vi.waitFor(() => expect(runtime.status().state).toBe('connected'), { timeout: 10_000 });
    await vi.waitFor(() => expect(runtime.directory.extensionCount).toBe(6), { timeout: 10_000 });

    const outside = sim.ring({ from: '+14155550123', to: '101' });
    await vi.waitFor(
      () =>
        expect(views.popup.cards.find((c) => c.callId === outside)).toMatchObject({
          callerName: 'Ada Lovelace',
          nameSource: 'crm',
          callerCompany: 'Analytical Engines',
          crmLookup: 'found',
          canOpenCrm: true,
        }),
      { timeout: 10_000 },
    );
    // The first time the card was shown, HubSpot had not answered: the pop did not wait.
    const first = views.popup.seen.find((cards) => cards.some((c) => c.callId === outside));
    expect(first?.find((c) => c.callId === outside)).toMatchObject({
      callerName: null,
      nameSource: 'none',
      crmLookup: 'pending',
    });
    expect(history.get(outside)).toMatchObject({
      callerName: 'Ada Lovelace',
      callerCompany: 'Analytical Engines',
    });
    // "Open in CRM" opens HubSpot's record (no CRM link template is set).
    expect(await runtime.presenter.openCrm(outside)).toEqual({ ok: true });
    expect(views.urlOpener.opened).toEqual([
      `https://app.hubspot.com/contacts/20251122/record/0-1/${ada.id}`,
    ]);

    // A colleague: the phone system names them, HubSpot is not asked.
    const searches = hubspot.searches.length;
    const internal = sim.ring({ from: colleague.number, to: '101' });
    // A contact from the file: the file's name stays; HubSpot adds nothing it lacks but the record.
    const known = sim.ring({ from: '+14155550177', to: '101' });
    await vi.waitFor(
      () =>
        expect(views.popup.cards.find((c) => c.callId === known)).toMatchObject({
          crmLookup: 'found',
        }),
      { timeout: 10_000 },
    );
    expect(views.popup.cards.find((c) => c.callId === internal)).toMatchObject({
      callerName: colleague.caller_id_name,
      nameSource: 'directory',
      crmLookup: null,
    });
    expect(views.popup.cards.find((c) => c.callId === known)).toMatchObject({
      callerName: 'Bob the Builder',
      nameSource: 'contacts',
      numberKind: 'mobile',
    });
    expect(hubspot.searches.length).toBe(searches + 1);
    expect(runtime.crmStats()).toMatchObject({ provider: 'hubspot', lookups: 2, found: 2 });

    // Missed: its log carries the contact HubSpot found (the Calls engagement's association).
    sim.setCallState(outside, 'ended');
    await vi.waitFor(() => expect(callLog.records.map((r) => r.callId)).toContain(outside), {
      timeout: 10_000,
    });
    expect(callLog.records.find((r) => r.callId === outside)).toMatchObject({
      outcome: 'missed',
      contactId: ada.id,
    });
  });
});
