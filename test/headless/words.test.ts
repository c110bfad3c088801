/**
 * The runner's words name what the runner has (its flags, its environment variables), never the
 * app's Settings window or its tray's "Try again now": every status message that does has a
 * runner.status.* stand-in (src-main/headless/output.ts), with the same arguments, in every
 * language the catalogue test checks.
 */
import { describe, expect, it } from 'vitest';
import { CATALOGUES, flatMessages } from '../../src-shared/i18n/catalogue.ts';
import { createTranslator } from '../../src-shared/i18n/translator.ts';
import { describeError, ServiceError } from '../../src-shared/api/service-errors.ts';
import { statusLine } from '../../src-main/headless/output.ts';

const english = flatMessages(CATALOGUES.en);
/**
 * Words only the tray app can reach (onboarding, its built-in demo, a secret-looking field in its
 * settings file: the runner reads no settings file, and its flags have no such field; the call
 * log's state in Settings' status: the runner says each call logged in a `logged` line and a stop
 * of its queue in its log).
 */
const APP_ONLY = new Set([
  'status.not-set-up-remedy',
  'status.demo-failed-remedy',
  'status.settings.secret-field',
  'status.call-log.auth.remedy',
  'status.call-log.forbidden.remedy',
  'status.call-log.no-credentials.remedy',
]);

function argumentsOf(message: string): string[] {
  return [...new Set([...message.matchAll(/\{(\w+)/g)].map((m) => m[1]!))].sort();
}

describe("the runner's words", () => {
  it('stand in for every status message that names Settings or Try again now', () => {
    const appWords = [...english]
      .filter(([id, text]) => id.startsWith('status.') && /Settings|Try again now/.test(text))
      .map(([id]) => id)
      .filter((id) => !APP_ONLY.has(id));
    expect(appWords.length).toBeGreaterThan(10);
    for (const id of appWords) {
      const own = english.get(`runner.${id}`);
      expect(own, `runner.${id}`).toBeDefined();
      expect(own).not.toMatch(/Settings|Try again now/);
      expect(argumentsOf(own!), id).toEqual(argumentsOf(english.get(id)!));
    }
    // Every stand-in stands in for something.
    for (const id of english.keys())
      if (id.startsWith('runner.status.'))
        expect(english.has(id.slice('runner.'.length)), id).toBe(true);
  });

  it('in a status line name the flag, in the language of --lang', () => {
    const fault = describeError(
      new ServiceError({ kind: 'network', message: 'get_token: refused' }),
    );
    const status = {
      state: 'offline' as const,
      reason: fault.reason,
      remedy: fault.remedy,
      words: fault.words,
    };
    expect(statusLine(status).remedy).toBe(
      'Check the network connection and --base-url; the runner tries again by itself.',
    );
    expect(statusLine(status, createTranslator('de', { isolate: false })).remedy).toBe(
      'Prüfen Sie die Netzwerkverbindung und --base-url; der Runner versucht es selbst erneut.',
    );
    // The app keeps its own words for the same fault.
    expect(fault.remedy).toContain('in Settings');
  });
});
