/** What the settings form sends: lists parsed from text, numbers checked, the secret only when typed. */
import { describe, expect, it } from 'vitest';
import { DEFAULT_SETTINGS } from '../../src-main/core/settings/types.ts';
import {
  changedSettings,
  mergeUntouched,
  parseList,
  toFormValues,
  toPatch,
} from '../../src-renderer/settings/form-values.ts';

describe('parseList', () => {
  it('splits on commas, semicolons and lines, trims, and drops blanks and repeats', () => {
    expect(parseList('101, 102\n103;; 101 \r\n\n , ')).toEqual(['101', '102', '103']);
    expect(parseList('+1 415 555 0100\n+44 20 7946 0958')).toEqual([
      '+1 415 555 0100',
      '+44 20 7946 0958',
    ]);
    expect(parseList('   ')).toEqual([]);
  });
});

describe('toPatch', () => {
  const base = toFormValues({ ...DEFAULT_SETTINGS, extensions: ['101'], popupLingerSec: 4 });

  it('round-trips settings and leaves the stored secret alone when none was typed', () => {
    const result = toPatch(base);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.patch.settings.extensions).toEqual(['101']);
    expect(result.patch.settings.popupLingerSec).toBe(4);
    expect('secret' in result.patch).toBe(false);
  });

  it('the call log’s fields: one outcome choice a line (commas kept), the note’s seconds a number', () => {
    const result = toPatch({
      ...base,
      callLogCalls: 'answered-and-missed',
      callNoteSec: ' 90 ',
      callLogChoices: 'Resolved\n\n Call back, Friday \r\nWrong number',
    });
    expect(result.ok && result.patch.settings).toMatchObject({
      callLogCalls: 'answered-and-missed',
      callNoteSec: 90,
      callLogChoices: ['Resolved', 'Call back, Friday', 'Wrong number'],
    });
    expect(toPatch({ ...base, callNoteSec: 'two minutes' })).toMatchObject({
      ok: false,
      field: 'callNoteSec',
    });
    expect(toFormValues(DEFAULT_SETTINGS).callLogChoices).toBe(
      'Resolved\nFollow-up\nLeft a message\nWrong number',
    );
  });

  it('sends a newly typed secret as is, and trims the other text fields', () => {
    const result = toPatch({
      ...base,
      secret: '  spaced secret ',
      baseUrl: ' https://acme.example.com ',
      defaultRegion: 'gb',
    });
    expect(result).toMatchObject({
      ok: true,
      patch: {
        secret: '  spaced secret ',
        settings: { baseUrl: 'https://acme.example.com', defaultRegion: 'GB' },
      },
    });
  });

  it('never sends a secret typed before switching to organisation mode (which keeps none)', () => {
    const result = toPatch({ ...base, secret: 'typed-before', connectionMode: 'organisation' });
    expect(result).toMatchObject({
      ok: true,
      patch: { settings: { connectionMode: 'organisation' } },
    });
    expect(result.ok && 'secret' in result.patch).toBe(false);
  });

  it('refuses a linger time that is not a number of seconds, naming the field', () => {
    for (const bad of ['', 'soon', '-1']) {
      expect(toPatch({ ...base, popupLingerSec: bad })).toEqual({
        ok: false,
        field: 'popupLingerSec',
        message: 'settings.error.linger',
      });
    }
  });
});

describe('changedSettings and mergeUntouched', () => {
  const before = toFormValues({ ...DEFAULT_SETTINGS, extensions: ['101'], sound: true });

  it('keeps only the settings that differ from what main last sent, and the typed secret', () => {
    const edited = { ...before, extensions: '101\n102', secret: 'typed' };
    const built = toPatch(edited);
    if (!built.ok) throw new Error('patch refused');
    expect(changedSettings(built.patch, before)).toEqual({
      settings: { extensions: ['101', '102'] },
      secret: 'typed',
    });
    const unchanged = toPatch(before);
    if (!unchanged.ok) throw new Error('patch refused');
    expect(changedSettings(unchanged.patch, before)).toEqual({ settings: {} });
  });

  it('moves untouched fields to the incoming values and keeps the edited ones', () => {
    const current = { ...before, extensions: '102' };
    const incoming = { ...before, extensions: '103', sound: false };
    expect(mergeUntouched(current, before, incoming)).toEqual({
      ...before,
      extensions: '102',
      sound: false,
    });
  });
});
