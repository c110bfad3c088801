import { describe, expect, it } from 'vitest';
import { readControlFrame } from '../../src-shared/wire/control-frame.ts';
import { STANDARD_STREAM } from '../../src-shared/wire/standard.ts';
import { YEASTAR_STREAM } from '../../src-shared/wire/yeastar-p-series.ts';

describe('readControlFrame: the stream control frames both the app and the relay read', () => {
  it('reads the subscribe answer, whole or partial, in the standard dialect', () => {
    expect(readControlFrame(STANDARD_STREAM, '{"errcode":0,"errmsg":"SUCCESS"}')).toEqual({
      errcode: 0,
      errmsg: 'SUCCESS',
      subscribed: 'all',
      meaning: undefined,
    });
    const partial = readControlFrame(STANDARD_STREAM, '{"errcode":10003,"errmsg":"no 30009"}');
    expect(partial?.subscribed).toBe('partial');
    expect(partial?.errmsg).toBe('no 30009');
  });

  it("classifies an errcode by the phone system's own table (10004: address, or token)", () => {
    expect(readControlFrame(STANDARD_STREAM, '{"errcode":10004}')?.meaning?.kind).toBe('ip');
    expect(readControlFrame(YEASTAR_STREAM, '{"errcode":10004}')?.meaning?.kind).toBe('expired');
    expect(readControlFrame(STANDARD_STREAM, '{"errcode":10002}')?.meaning?.kind).toBe('expired');
  });

  it('leaves events, long texts and anything malformed alone', () => {
    for (const text of [
      '{"event":30011,"errcode":0}',
      `{"errcode":0,"pad":"${'x'.repeat(4096)}"}`,
      '{"errcode":"0"}',
      '[{"errcode":0}]',
      '{"errcode":0',
      'heartbeat response',
    ])
      expect(readControlFrame(STANDARD_STREAM, text)).toBeUndefined();
  });
});
