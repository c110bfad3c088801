// @vitest-environment jsdom
/**
 * The phone system in the settings window: asked first on the welcome step (and played by the
 * demo), the first field of Connection after how this computer connects (API key or organisation),
 * and the words that follow it (Yeastar's Client ID and
 * Client Secret, features it does not offer, the address to allow in its terms).
 */
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SETTINGS } from '../../src-main/core/settings/types.ts';
import { SettingsApp } from '../../src-renderer/settings/SettingsApp.tsx';
import { fakeApi, savedView } from './fake-api.ts';

afterEach(cleanup);
beforeAll(() => {
  Element.prototype.scrollIntoView = function scrollIntoView() {};
});

const input = (label: RegExp | string) => screen.getByLabelText(label) as HTMLInputElement;

describe('the phone system in settings', () => {
  it('is the first field of Connection after the connection mode; Yeastar P-Series speaks its own words and saves the choice', async () => {
    const { api } = fakeApi();
    render(<SettingsApp api={api} />);
    const select = (await screen.findByLabelText('Phone system')) as HTMLSelectElement;
    const connection = document.getElementById('section-connection')!;
    // The connection mode comes first (organisation mode has no phone system to choose: the
    // relay talks to it); in API-key mode the phone system is the first thing asked.
    expect(connection.querySelector('select, input:not([name="connectionMode"])')).toBe(select);
    expect(select.value).toBe('standard');
    expect(input('API key')).toBeTruthy();
    expect(input('Voicemail').disabled).toBe(false);

    fireEvent.change(select, { target: { value: 'yeastar-p-series' } });
    expect(input('Client ID')).toBeTruthy();
    expect(input('Client Secret').type).toBe('password');
    expect(
      screen.getByText(/Integrations > API and switch|Cloud, Software or Appliance/),
    ).toBeTruthy();
    // Its wire dialect has no SMS event; voicemail comes from its call records (30012).
    const sms = input('Text messages (SMS)');
    expect(sms.disabled).toBe(true);
    expect(sms.checked).toBe(false);
    expect(document.getElementById(sms.getAttribute('aria-describedby')!)?.textContent).toBe(
      'Not offered by this phone system.',
    );
    expect(input('Voicemail').disabled).toBe(false);
    expect(input('Warn when calls from outside may not reach me').disabled).toBe(false);

    fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(api.saveSettings).toHaveBeenCalledTimes(1));
    expect(api.saveSettings.mock.calls[0]?.[0].settings).toEqual({
      phoneSystem: 'yeastar-p-series',
    });
  });

  it("a refused address in a Yeastar test is said in the PBX portal's terms (main names the message)", async () => {
    const { api } = fakeApi({
      ...savedView,
      settings: { ...savedView.settings, phoneSystem: 'yeastar-p-series' },
    });
    api.testConnection.mockResolvedValueOnce({
      ok: false,
      message: 'The phone system’s API does not accept requests from this computer’s address.',
      remedy: 'In the PBX web portal, open Integrations > API and add this computer’s address.',
      errcode: 70087,
      ipToAllow: '203.0.113.7',
      ipToAllowMessage: 'settings.test.ip-yeastar',
    });
    render(<SettingsApp api={api} />);
    fireEvent.click(await screen.findByRole('button', { name: 'Test connection' }));
    const result = await screen.findByTestId('connection-result');
    expect(result.textContent).toContain(
      'Add it to the allowed IP addresses in the PBX web portal',
    );
    expect(screen.getByTestId('ip-to-allow').textContent).toBe('203.0.113.7');
  });
});

describe('onboarding asks for the phone system first', () => {
  const firstRun = { settings: { ...DEFAULT_SETTINGS }, hasSecret: false, needsOnboarding: true };

  it('before the two ways in; the demo plays the one chosen', async () => {
    const { api } = fakeApi(firstRun);
    api.saveSettings.mockResolvedValueOnce({
      ok: true,
      view: { ...firstRun, settings: { ...firstRun.settings, phoneSystem: 'yeastar-p-series' } },
    });
    render(<SettingsApp api={api} />);
    const question = await screen.findByTestId('phone-system');
    const buttons = screen.getAllByRole('button');
    // The question comes before both choices in the page.
    for (const b of buttons)
      expect(question.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
    fireEvent.click(screen.getByLabelText('Yeastar P-Series'));
    fireEvent.click(screen.getByRole('button', { name: /Try the demo/ }));
    await waitFor(() => expect(api.startDemo).toHaveBeenCalledTimes(1));
    expect(api.saveSettings).toHaveBeenCalledWith({
      settings: { phoneSystem: 'yeastar-p-series' },
    });
    expect(api.saveSettings.mock.invocationCallOrder[0]!).toBeLessThan(
      api.startDemo.mock.invocationCallOrder[0]!,
    );
  });

  it('connecting a Yeastar PBX opens the form in its words', async () => {
    const { api } = fakeApi(firstRun);
    api.saveSettings.mockResolvedValueOnce({
      ok: true,
      view: { ...firstRun, settings: { ...firstRun.settings, phoneSystem: 'yeastar-p-series' } },
    });
    render(<SettingsApp api={api} />);
    fireEvent.click(await screen.findByLabelText('Yeastar P-Series'));
    fireEvent.click(screen.getByRole('button', { name: /Connect to my phone system/ }));
    await screen.findByRole('heading', { name: 'Connect to your phone system' });
    expect((screen.getByLabelText('Phone system') as HTMLSelectElement).value).toBe(
      'yeastar-p-series',
    );
    expect(input('Client ID')).toBeTruthy();
  });
});
