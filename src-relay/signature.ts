import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * X-Service-Signature verification (docs/wire-protocol.md section 7): `sha256=<hex>`, hex = HMAC-SHA256 of the
 * exact raw body bytes keyed with the webhook secret's UTF-8 bytes.
 *
 * The header is decoded to 32 bytes before any comparison, so a malformed or wrong-length value is
 * rejected on its shape alone and the comparison itself is always timingSafeEqual over equal
 * lengths. Every configured secret is tried (rotation: old and new are both accepted while the
 * admin console switches over); a retired secret is simply no longer in the list.
 */
export type SignatureVerdict = 'valid' | 'missing' | 'malformed' | 'mismatch';

const HEADER = /^sha256=([0-9a-fA-F]{64})$/;

export function signBody(secret: string, body: Uint8Array | string): string {
  return 'sha256=' + createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest('hex');
}

export function verifySignature(
  rawBody: Uint8Array,
  header: string | string[] | undefined,
  secrets: readonly string[],
): SignatureVerdict {
  if (header === undefined || header === '') return 'missing';
  // Several X-Service-Signature headers are ambiguous: refuse rather than pick one.
  if (Array.isArray(header)) return 'malformed';
  const match = HEADER.exec(header.trim());
  if (!match) return 'malformed';
  const presented = Buffer.from(match[1]!, 'hex');
  if (presented.length !== 32) return 'malformed';
  let ok = false;
  // No early exit: the time taken does not say which secret (if any) matched.
  for (const secret of secrets) {
    const expected = createHmac('sha256', Buffer.from(secret, 'utf8')).update(rawBody).digest();
    if (timingSafeEqual(expected, presented)) ok = true;
  }
  return ok ? 'valid' : 'mismatch';
}
