/**
 * Text from the service (an extension's caller_id_name, an errmsg) goes through the same one-line
 * rule as caller text (src-shared/ui/text.ts previewText): before, api/plain-text.ts only replaced C0/C1
 * controls, so a bidi override or a lone surrogate reached the tray, the card and the log.
 */
import { describe, expect, it } from 'vitest';
import { parseExtensionPage } from '../../src-shared/api/wire.ts';
import { errorFromResponse } from '../../src-shared/api/errors.ts';

const HOSTILE = 'Ann\u202Eenna\u2066\u200B Lee\r\nsecond line\uD800\u0000';

describe('untrusted text from the service', () => {
  it('an extension name is one clean line: no bidi overrides, zero-width or lone surrogates', () => {
    const page = parseExtensionPage(
      { errcode: 0, data: [{ number: '101', caller_id_name: HOSTILE }] },
      'extension/list',
    );
    expect(page.extensions[0]?.callerIdName).toBe('Annenna Lee second line\uFFFD');
  });

  it('an errmsg in an error message is the same clean line, cut with an ellipsis', () => {
    const err = errorFromResponse(
      400,
      { errcode: 40001, errmsg: HOSTILE + 'x'.repeat(300) },
      new Headers(),
      {
        operation: 'get_token',
        now: 0,
      },
    );
    expect(err.message).toContain('(Annenna Lee second line\uFFFD');
    for (const unsafe of ['\u202E', '\u2066', '\u200B', '\r', '\n', '\u0000', '\uD800'])
      expect(err.message).not.toContain(unsafe);
    expect(err.message).toMatch(/x…\), HTTP 400$/);
  });
});
