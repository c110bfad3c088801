// @vitest-environment jsdom
/**
 * The settings window in jsdom through its public surface (what the user sees and presses), with a
 * fake ScreenpopApi standing in for main.
 */
import { act, cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SETTINGS } from '../../src-main/core/settings/types.ts';
import { SettingsApp } from '../../src-renderer/settings/SettingsApp.tsx';
import { fakeApi, savedView, status } from './fake-api.ts';
import { phrase } from '../../src-shared/i18n/phrase.ts';

afterEach(cleanup);
// jsdom lays nothing out and has no scrollIntoView; the jump list and the test button call it.
beforeAll(() => {
  Element.prototype.scrollIntoView = function scrollIntoView() {};
});

function input(label: RegExp | string): HTMLInputElement {
  return screen.getByLabelText(label) as HTMLInputElement;
}

describe('settings', () => {
  it('never shows the stored secret, says it is in the keychain, and sends a new one only when typed', async () => {
    const { api } = fakeApi();
    render(<SettingsApp api={api} />);
    const secret = await waitFor(() => input('API secret'));
    expect(secret.type).toBe('password');
    expect(secret.value).toBe('');
    expect(secret.placeholder).toBe('Stored in keychain');
    expect(screen.getByTestId('secret-stored').textContent).toContain('Stored in the keychain');

    fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(api.saveSettings).toHaveBeenCalledTimes(1));
    expect(api.saveSettings.mock.calls[0]?.[0]).not.toHaveProperty('secret');
    await waitFor(() => expect(screen.getByTestId('save-status').textContent).toBe('Saved.'));

    fireEvent.change(secret, { target: { value: 'n3w-s3cret' } });
    fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(api.saveSettings).toHaveBeenCalledTimes(2));
    expect(api.saveSettings.mock.calls[1]?.[0]).toMatchObject({ secret: 'n3w-s3cret' });
    await waitFor(() => expect(input('API secret').value).toBe(''));
  });

  it('shows main’s field error next to that field, marks it invalid and clears it when edited', async () => {
    const { api } = fakeApi();
    api.saveSettings.mockResolvedValueOnce({
      ok: false,
      field: 'baseUrl',
      words: [phrase('status.settings.address-insecure', { secure: 'https', insecure: 'http' })],
      message: 'baseUrl must start with https://',
    });
    render(<SettingsApp api={api} />);
    const baseUrl = await waitFor(() => input('Service address'));
    fireEvent.change(baseUrl, { target: { value: 'http://acme.example.com' } });
    fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    const error = await screen.findByTestId('error-baseUrl');
    // main's words, said in the window's language, as a sentence beside the field.
    expect(error.textContent).toBe(
      'Must start with https:// (http:// is allowed only for localhost or 127.0.0.1), so that the connection is encrypted',
    );
    expect(baseUrl.getAttribute('aria-invalid')).toBe('true');
    expect(baseUrl.getAttribute('aria-describedby')?.split(' ')).toContain(error.id);
    expect(error.closest('[data-field]')?.getAttribute('data-field')).toBe('baseUrl');
    fireEvent.change(baseUrl, { target: { value: 'https://acme.example.com' } });
    expect(screen.queryByTestId('error-baseUrl')).toBeNull();
    expect(baseUrl.hasAttribute('aria-invalid')).toBe(false);
  });

  it('puts an error about one entry of a list (extensions[1]) next to that list', async () => {
    const { api } = fakeApi();
    api.saveSettings.mockResolvedValueOnce({
      ok: false,
      field: 'extensions[1]',
      words: [phrase('status.settings.extension', { max: '7' })],
      message: 'extensions[1] is not an extension number',
    });
    render(<SettingsApp api={api} />);
    const extensions = await waitFor(() => input('Your extensions'));
    fireEvent.change(extensions, { target: { value: '101, abc' } });
    fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    expect((await screen.findByTestId('error-extensions')).textContent).toBe(
      'Entry 2: is not an extension number (1 to 7 digits, e.g. "101")',
    );
    expect(extensions.getAttribute('aria-invalid')).toBe('true');
  });

  it('sends the form as a patch: lists split from text, event source, relay and toggles', async () => {
    const { api } = fakeApi();
    render(<SettingsApp api={api} />);
    const extensions = await waitFor(() => input('Your extensions'));
    fireEvent.change(extensions, { target: { value: '101\n102, 103' } });
    fireEvent.click(screen.getByLabelText('Relay'));
    fireEvent.change(input('Relay address'), { target: { value: 'wss://relay.example.com' } });
    fireEvent.change(input('Relay tenant'), { target: { value: ' globex ' } });
    fireEvent.change(screen.getByLabelText('Proxy'), { target: { value: 'manual' } });
    fireEvent.change(input('Proxy address'), {
      target: { value: ' http://proxy.example.com:3128 ' },
    });
    fireEvent.click(screen.getByLabelText('Do not disturb'));
    fireEvent.change(screen.getByLabelText('Corner'), { target: { value: 'top-left' } });
    fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(api.saveSettings).toHaveBeenCalledTimes(1));
    expect(api.saveSettings.mock.calls[0]?.[0]?.settings).toMatchObject({
      extensions: ['101', '102', '103'],
      eventSource: 'relay',
      relayUrl: 'wss://relay.example.com',
      relayTenant: 'globex',
      proxyMode: 'manual',
      proxyUrl: 'http://proxy.example.com:3128',
      doNotDisturb: true,
      popupCorner: 'top-left',
    });
  });

  it('explains a failed connection test with the remedy and the address to allow (10004)', async () => {
    const { api } = fakeApi();
    api.testConnection.mockResolvedValueOnce({
      ok: false,
      message: 'The service refused this computer’s address.',
      remedy: 'Add the caller IP to the key’s allowlist.',
      errcode: 10004,
      ipToAllow: '203.0.113.7',
    });
    render(<SettingsApp api={api} />);
    fireEvent.click(await screen.findByRole('button', { name: 'Test connection' }));
    const result = await screen.findByTestId('connection-result');
    expect(result.textContent).toContain('Connection test: could not connect.');
    expect(result.textContent).toContain('The service refused this computer’s address.');
    expect(result.textContent).toContain('What to do: Add the caller IP to the key’s allowlist.');
    expect(screen.getByTestId('ip-to-allow').textContent).toBe('203.0.113.7');
    expect(result.textContent).toContain('Error code 10004');
    expect(api.testConnection.mock.calls[0]?.[0]?.settings.baseUrl).toBe(
      'https://acme.example.com',
    );
  });

  it('names the extension when the connection test finds it', async () => {
    const { api } = fakeApi();
    api.testConnection.mockResolvedValueOnce({
      ok: true,
      message: 'Signed in.',
      extensionName: 'Ada <b>Lovelace</b>',
      extensionCount: 3,
    });
    render(<SettingsApp api={api} />);
    fireEvent.click(await screen.findByRole('button', { name: 'Test connection' }));
    const result = await screen.findByTestId('connection-result');
    expect(result.textContent).toContain('Extension 101 belongs to Ada <b>Lovelace</b>.');
    expect(result.querySelector('b')).toBeNull();
    expect(result.textContent).toContain('The service lists 3 extensions.');
  });

  it('previews the CRM link through main, and shows main’s refusal in words', async () => {
    const { api } = fakeApi();
    api.previewCrm.mockImplementation(async (template: string) =>
      template.startsWith('https:')
        ? { ok: true, url: 'https://crm.example.com/?p=%2B14155550123' }
        : {
            ok: false,
            words: [phrase('status.link.crm-scheme', { scheme: 'javascript' })],
            message: 'The CRM link must start with https://',
          },
    );
    render(<SettingsApp api={api} />);
    const template = await waitFor(() => input('CRM link'));
    fireEvent.change(template, { target: { value: 'https://crm.example.com/?p={from}' } });
    expect((await screen.findByTestId('crm-preview-url', {}, { timeout: 2000 })).textContent).toBe(
      'https://crm.example.com/?p=%2B14155550123',
    );
    fireEvent.change(template, { target: { value: 'javascript:alert({from})' } });
    expect(
      (await screen.findByTestId('crm-preview-error', {}, { timeout: 2000 })).textContent,
    ).toBe(
      'The CRM link must start with https:// (or a scheme your administrator allowed), not "javascript:".',
    );
    expect(api.previewCrm).toHaveBeenLastCalledWith('javascript:alert({from})');
  });

  it('takes a change made elsewhere (tray DND) without losing the user’s edits, and saves only what they changed', async () => {
    const { api, emit } = fakeApi();
    render(<SettingsApp api={api} />);
    const extensions = await waitFor(() => input('Your extensions'));
    fireEvent.change(extensions, { target: { value: '101, 102' } });
    expect(input('Do not disturb').checked).toBe(false);
    act(() =>
      emit('settings:changed', {
        ...savedView,
        settings: { ...savedView.settings, doNotDisturb: true },
      }),
    );
    expect(input('Do not disturb').checked).toBe(true);
    expect(input('Your extensions').value).toBe('101, 102');
    fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(api.saveSettings).toHaveBeenCalledTimes(1));
    expect(api.saveSettings.mock.calls[0]?.[0]).toEqual({
      settings: { extensions: ['101', '102'] },
    });
  });
});

describe('settings: one status, sections, the contacts file picker', () => {
  it('shows one status at a time: the live one, a test result instead of it, and the live one again when the test goes stale', async () => {
    const { api, emit } = fakeApi();
    api.testConnection.mockResolvedValue({
      ok: false,
      message: 'The service refused this computer’s address.',
      errcode: 10004,
    });
    render(<SettingsApp api={api} />);
    expect((await screen.findByTestId('status')).textContent).toContain('Connected');
    fireEvent.click(screen.getByRole('button', { name: 'Test connection' }));
    const result = await screen.findByTestId('connection-result');
    expect(result.textContent).toContain('Connection test: could not connect.');
    // Never a green "Connected" beside a red "Could not connect".
    expect(screen.queryByTestId('status')).toBeNull();
    expect(document.querySelectorAll('.notice--ok, .notice--error')).toHaveLength(1);
    // Editing what was tested makes the result stale: the live status is back.
    fireEvent.change(input('API key'), { target: { value: 'ak_2' } });
    expect(screen.getByTestId('status').textContent).toContain('Connected');
    // A test of unsaved values says so; a change of the live state replaces it.
    fireEvent.click(screen.getByRole('button', { name: 'Test connection' }));
    expect((await screen.findByTestId('connection-result')).textContent).toContain('not saved yet');
    act(() => emit('status:changed', { ...status, state: 'offline', reason: 'No network.' }));
    expect(screen.getByTestId('status').textContent).toContain('Offline');
    expect(screen.queryByTestId('connection-result')).toBeNull();
  });

  it('says what keeps Screenpop from working on this computer, with the remedy, as a warning', async () => {
    const { api, emit } = fakeApi();
    render(<SettingsApp api={api} />);
    await screen.findByTestId('status');
    expect(document.querySelector('.notice--ok')).not.toBeNull();
    act(() =>
      emit('status:changed', {
        ...status,
        desktopProblems: [
          {
            id: 'popup',
            reason: 'The call popup could not be shown.',
            remedy: 'Quit Screenpop and start it again.',
          },
        ],
      }),
    );
    const problem = screen.getByTestId('status-desktop-popup');
    expect(problem.textContent).toBe(
      'The call popup could not be shown. What to do: Quit Screenpop and start it again.',
    );
    expect(document.querySelector('.notice--warn')).not.toBeNull();
  });

  it('lays the settings out in named sections with a jump list, and says when changes are unsaved', async () => {
    const { api } = fakeApi();
    render(<SettingsApp api={api} />);
    const nav = await screen.findByRole('navigation', { name: 'Settings sections' });
    const titles = [
      'Connection',
      'Your phone',
      'Screen-pop & CRM',
      'CRM lookup',
      'Notifications & start-up',
      'Language',
      'Advanced',
    ];
    expect(Array.from(nav.querySelectorAll('button')).map((b) => b.textContent)).toEqual(titles);
    expect(screen.getAllByRole('heading', { level: 2 }).map((h) => h.textContent)).toEqual(titles);
    // Each field sits in its section.
    const sectionOf = (label: string) =>
      input(label).closest('section')?.querySelector('h2')?.textContent;
    expect(sectionOf('Service address')).toBe('Connection');
    expect(sectionOf('Your extensions')).toBe('Your phone');
    expect(sectionOf('CRM link')).toBe('Screen-pop & CRM');
    expect(sectionOf('Do not disturb')).toBe('Notifications & start-up');
    expect(sectionOf('Relay address')).toBe('Advanced');
    fireEvent.click(screen.getByRole('button', { name: 'Advanced' }));
    expect(document.activeElement?.textContent).toBe('Advanced');
    expect(screen.queryByTestId('unsaved')).toBeNull();
    fireEvent.click(screen.getByLabelText('Play a sound when a call rings'));
    expect(screen.getByTestId('unsaved').textContent).toBe('Unsaved changes');
    fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(screen.getByTestId('save-status').textContent).toBe('Saved.'));
    expect(screen.queryByTestId('unsaved')).toBeNull();
  });

  it('chooses the contacts file with main’s dialog: cancelled changes nothing, a picked file is shown with what is in it and saved on Save', async () => {
    const { api } = fakeApi();
    render(<SettingsApp api={api} />);
    const choose = await screen.findByRole('button', { name: 'Choose file…' });
    expect(screen.getByTestId('contacts-file').textContent).toBe('No file chosen');
    // No text box: a path cannot be typed.
    expect(screen.queryByRole('textbox', { name: /Contacts file/ })).toBeNull();
    expect(screen.getByRole('group', { name: 'Contacts file (optional)' })).toBeTruthy();

    fireEvent.click(choose);
    await waitFor(() => expect(api.chooseContactsFile).toHaveBeenCalledTimes(1));
    expect(screen.getByTestId('contacts-file').textContent).toBe('No file chosen');

    api.chooseContactsFile.mockResolvedValueOnce({
      status: 'failed',
      path: '/home/ada/notes.txt',
      message: 'No contacts found in this file.',
    });
    fireEvent.click(choose);
    expect((await screen.findByTestId('error-contactsFile')).textContent).toBe(
      'No contacts found in this file.',
    );
    expect(screen.getByTestId('contacts-file').textContent).toBe('No file chosen');

    api.chooseContactsFile.mockResolvedValueOnce({
      status: 'picked',
      path: 'C:\\Users\\ada\\<b>contacts</b>.csv',
      contacts: 42,
    });
    fireEvent.click(choose);
    expect((await screen.findByTestId('contacts-found')).textContent).toBe(
      '42 numbers with names found. Save to use this file.',
    );
    expect(screen.queryByTestId('error-contactsFile')).toBeNull();
    expect(screen.getByTestId('contacts-file').querySelector('b')).toBeNull();
    expect(screen.getByTestId('contacts-path').textContent).toBe(
      'C:\\Users\\ada\\<b>contacts</b>.csv',
    );
    expect(screen.getByTestId('contacts-file').textContent).toContain('<b>contacts</b>.csv');
    fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(api.saveSettings).toHaveBeenCalledTimes(1));
    expect(api.saveSettings.mock.calls[0]?.[0]).toEqual({
      settings: { contactsFile: 'C:\\Users\\ada\\<b>contacts</b>.csv' },
    });
  });
});

describe('settings: the CRM lookup', () => {
  it('sets up the HubSpot lookup: the token field appears, Test lookup shows what HubSpot answered, Save stores the token', async () => {
    const { api } = fakeApi();
    render(<SettingsApp api={api} />);
    const provider = (await waitFor(() =>
      input('Look callers up in'),
    )) as unknown as HTMLSelectElement;
    expect(screen.queryByLabelText('HubSpot service key or access token')).toBeNull();
    expect(screen.queryByTestId('crm-test')).toBeNull();
    fireEvent.change(provider, { target: { value: 'hubspot' } });
    const token = input('HubSpot service key or access token');
    expect(token.type).toBe('password');
    fireEvent.change(token, { target: { value: 'pat-na1-typed' } });
    fireEvent.change(input('Number to look up'), { target: { value: '+1 415 555 0123' } });
    fireEvent.click(screen.getByRole('button', { name: 'Test lookup' }));
    await waitFor(() => expect(api.testCrmLookup).toHaveBeenCalledTimes(1));
    const [patch, number] = api.testCrmLookup.mock.calls[0] ?? [];
    expect(number).toBe('+1 415 555 0123');
    expect(patch).toMatchObject({
      settings: { crmLookup: { provider: 'hubspot', timeoutSec: 3 } },
      crmSecret: 'pat-na1-typed',
    });
    const result = await screen.findByTestId('crm-test-result');
    await waitFor(() =>
      expect(result.textContent).toContain('HubSpot knows this number: Ada Lovelace.'),
    );
    expect(screen.getByTestId('crm-test-company').textContent).toBe('Analytical Engines');
    expect(result.textContent).toContain('not saved yet');
    fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(api.saveSettings).toHaveBeenCalledTimes(1));
    expect(api.saveSettings.mock.calls[0]?.[0]).toMatchObject({
      settings: { crmLookup: { provider: 'hubspot' } },
      crmSecret: 'pat-na1-typed',
    });
  });

  it('puts a CRM lookup error next to its field (the address, the part main names, the time-out), and locks every CRM field with the policy', async () => {
    const { api } = fakeApi();
    api.saveSettings.mockResolvedValueOnce({
      ok: false,
      field: 'crmLookup',
      words: [
        phrase('status.settings.inner', {
          name: 'urlTemplate',
          problem: [phrase('status.settings.lookup-https')],
        }),
      ],
      message: 'crmLookup urlTemplate must start with https://',
    });
    render(<SettingsApp api={api} />);
    const provider = (await waitFor(() =>
      input('Look callers up in'),
    )) as unknown as HTMLSelectElement;
    fireEvent.change(provider, { target: { value: 'generic' } });
    fireEvent.change(input('Lookup address'), {
      target: { value: 'http://crm.example.com/?phone={number}' },
    });
    fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    const error = await screen.findByTestId('error-crmUrl');
    expect(error.textContent).toContain('must start with https://');
    // Main names the part of the setting: the error goes next to that field.
    api.saveSettings.mockResolvedValueOnce({
      ok: false,
      field: 'crmLookup.nameField',
      words: [phrase('settings.error.crm-name-needed')],
      message: 'Say where the caller’s name is in the answer, e.g. name.',
    });
    fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    expect((await screen.findByTestId('error-crmNameField')).textContent).toContain(
      'Say where the caller’s name is in the answer',
    );
    expect(screen.queryByTestId('error-crmUrl')).toBeNull();
    // The form's own check of the time-out, with the setting's range in the words.
    fireEvent.change(input('Wait for the CRM (seconds)'), { target: { value: '30' } });
    fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    expect((await screen.findByTestId('error-crmTimeoutSec')).textContent).toContain(
      'Enter a whole number of seconds from 1 to 10.',
    );
    expect(api.saveSettings).toHaveBeenCalledTimes(2);
    cleanup();

    const locked = fakeApi({
      ...savedView,
      settings: {
        ...savedView.settings,
        crmLookup: { ...DEFAULT_SETTINGS.crmLookup, provider: 'hubspot' },
      },
      managed: { by: 'Acme IT', locked: ['crmLookup'] },
    });
    render(<SettingsApp api={locked.api} />);
    const lockedProvider = await waitFor(() => input('Look callers up in'));
    expect(lockedProvider.closest('[data-field]')?.getAttribute('data-locked')).toBe('true');
    // The token is the user's to enter even when the lookup is locked.
    expect(input('HubSpot service key or access token').readOnly).toBe(false);
  });
});

describe('onboarding', () => {
  const firstRun = { settings: { ...DEFAULT_SETTINGS }, hasSecret: false, needsOnboarding: true };

  it('welcomes a newcomer with two choices; the demo starts at once', async () => {
    const { api } = fakeApi(firstRun);
    render(<SettingsApp api={api} />);
    expect((await screen.findByRole('heading', { level: 1 })).textContent).toBe(
      'Welcome to Screenpop',
    );
    fireEvent.click(screen.getByRole('button', { name: /Try the demo/ }));
    await waitFor(() => expect(api.startDemo).toHaveBeenCalledTimes(1));
    expect((await screen.findByTestId('demo-started')).textContent).toContain(
      'a practice call will ring',
    );
  });

  it('“Connect to my phone system” opens the connection form, and Back returns', async () => {
    const { api } = fakeApi(firstRun);
    render(<SettingsApp api={api} />);
    fireEvent.click(await screen.findByRole('button', { name: /Connect to my phone system/ }));
    expect(screen.getByRole('heading', { level: 1 }).textContent).toBe(
      'Connect to your phone system',
    );
    expect(input('API secret').placeholder).toBe('');
    expect(screen.queryByLabelText('CRM link')).toBeNull();
    fireEvent.click(screen.getByRole('button', { name: 'Back' }));
    expect(screen.getByRole('heading', { level: 1 }).textContent).toBe('Welcome to Screenpop');
  });
});
