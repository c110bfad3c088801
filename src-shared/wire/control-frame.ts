/**
 * The stream's control frames (docs/wire-protocol.md section 5): `{"errcode":N,"errmsg":"..."}`
 * without an event, the subscribe answer and the service's word that a token ended. Read and
 * classified here once, for the app's direct stream (src-main/core/events/ws-source.ts) and the
 * relay's gateway upstream (src-relay/gateway/upstream.ts), each with its phone system's table.
 */
import { ERRCODE } from '../api/errcodes.ts';
import type { ErrcodeMeaning } from '../api/service-errors.ts';
import type { StreamDialect } from './phone-system.ts';

/** The close code of a socket whose access token ended: reconnect with a fresh one. */
export const CLOSE_TOKEN_EXPIRED = 4002;

/** A control frame is short; a longer text is an event (and not parsed twice). */
const MAX_CONTROL_FRAME = 4096;

export interface ControlFrame {
  errcode: number;
  /** The frame's `errmsg` ('' when it has none). */
  errmsg: string;
  /**
   * The subscribe answer: 'all' (errcode 0), 'partial' (subscribed except the codes `errmsg`
   * names: the dialect's `partialSubscribe`), else undefined.
   */
  subscribed: 'all' | 'partial' | undefined;
  /** What the errcode means in this phone system's table (undefined for 0 and unknown codes). */
  meaning: ErrcodeMeaning | undefined;
}

/** `text` as a control frame of `dialect`'s stream, or undefined for anything else (an event). */
export function readControlFrame(
  dialect: Pick<StreamDialect, 'errcodes' | 'partialSubscribe'>,
  text: string,
): ControlFrame | undefined {
  if (text.length > MAX_CONTROL_FRAME || !text.includes('"errcode"')) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value) || 'event' in value)
    return undefined;
  const { errcode, errmsg: said } = value as { errcode?: unknown; errmsg?: unknown };
  if (typeof errcode !== 'number') return undefined;
  const errmsg = typeof said === 'string' ? said : '';
  const subscribed =
    errcode === ERRCODE.ok ? 'all' : errcode === dialect.partialSubscribe ? 'partial' : undefined;
  const meaning = errcode === ERRCODE.ok ? undefined : dialect.errcodes(errcode, { errmsg });
  return { errcode, errmsg, subscribed, meaning };
}
