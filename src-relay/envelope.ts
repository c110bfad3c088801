/**
 * Reads the few envelope fields the relay routes on, from a body whose signature already holds.
 * The body itself is kept and forwarded byte for byte; this parse only decides storage and routing.
 */
export interface RoutedEnvelope {
  eventId: string;
  event: number;
  tenant: string;
  /** data.to of a 30011 event (who is being called), else null. */
  to: string | null;
  /** The body as text (the original bytes, validated as UTF-8 so a text frame carries them exactly). */
  text: string;
}

export type EnvelopeResult =
  | { ok: true; envelope: RoutedEnvelope }
  | { ok: false; reason: 'not-utf8' | 'not-json' | 'not-envelope' };

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export function readEnvelope(raw: Uint8Array): EnvelopeResult {
  let text: string;
  try {
    text = utf8.decode(raw);
  } catch {
    return { ok: false, reason: 'not-utf8' };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'not-json' };
  }
  if (!value || typeof value !== 'object' || Array.isArray(value))
    return { ok: false, reason: 'not-envelope' };
  const v = value as Record<string, unknown>;
  const eventId = v.event_id;
  const event = v.event;
  const tenant = v.tenant;
  const data = v.data;
  if (typeof eventId !== 'string' || eventId.length === 0 || eventId.length > 200)
    return { ok: false, reason: 'not-envelope' };
  if (typeof event !== 'number' || !Number.isInteger(event))
    return { ok: false, reason: 'not-envelope' };
  if (typeof tenant !== 'string') return { ok: false, reason: 'not-envelope' };
  if (!data || typeof data !== 'object' || Array.isArray(data))
    return { ok: false, reason: 'not-envelope' };
  const to =
    event === 30011 && typeof (data as Record<string, unknown>).to === 'string'
      ? ((data as Record<string, unknown>).to as string)
      : null;
  return { ok: true, envelope: { eventId, event, tenant, to, text } };
}
