import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Webhook signature verification. Two schemes, each HMAC-SHA256 of the exact raw body bytes keyed
 * with the webhook secret's UTF-8 bytes, differing only in how the header writes the digest:
 * - the standard service's `X-Service-Signature: sha256=<hex>` (docs/wire-protocol.md section 7);
 * - Yeastar P-Series' `X-Signature: <Base64>` ("Monitor Events via Webhook",
 *   docs/phone-systems/yeastar-p-series.md section 7).
 *
 * The header is decoded to 32 bytes before any comparison, so a malformed or wrong-length value is
 * rejected on its shape alone and the comparison itself is always timingSafeEqual over equal
 * lengths. Every configured secret is tried (rotation: old and new are both accepted while the
 * admin console switches over); a retired secret is simply no longer in the list.
 */
export type SignatureVerdict = 'valid' | 'missing' | 'malformed' | 'mismatch';

const HEX_HEADER = /^sha256=([0-9a-fA-F]{64})$/;
/** 32 bytes in Base64: 43 characters and one `=`. */
const BASE64_HEADER = /^([A-Za-z0-9+/]{43}=)$/;

/** The standard service's `X-Service-Signature`. */
export function verifySignature(
  rawBody: Uint8Array,
  header: string | string[] | undefined,
  secrets: readonly string[],
): SignatureVerdict {
  return verify(rawBody, header, secrets, HEX_HEADER, 'hex');
}

/** Yeastar P-Series' `X-Signature`. */
export function verifyYeastarSignature(
  rawBody: Uint8Array,
  header: string | string[] | undefined,
  secrets: readonly string[],
): SignatureVerdict {
  return verify(rawBody, header, secrets, BASE64_HEADER, 'base64');
}

/** A delivery's signature in the form its phone system writes it (src-shared/wire's webhook dialect). */
export function verifyWebhookSignature(
  rawBody: Uint8Array,
  header: string | string[] | undefined,
  secrets: readonly string[],
  form: 'sha256-hex' | 'base64',
): SignatureVerdict {
  return form === 'base64'
    ? verifyYeastarSignature(rawBody, header, secrets)
    : verifySignature(rawBody, header, secrets);
}

function verify(
  rawBody: Uint8Array,
  header: string | string[] | undefined,
  secrets: readonly string[],
  shape: RegExp,
  encoding: 'hex' | 'base64',
): SignatureVerdict {
  if (header === undefined || header === '') return 'missing';
  // Several signature headers are ambiguous: refuse rather than pick one.
  if (Array.isArray(header)) return 'malformed';
  const match = shape.exec(header.trim());
  if (!match) return 'malformed';
  const presented = Buffer.from(match[1]!, encoding);
  if (presented.length !== 32) return 'malformed';
  let ok = false;
  // No early exit: the time taken does not say which secret (if any) matched.
  for (const secret of secrets) {
    const expected = createHmac('sha256', Buffer.from(secret, 'utf8')).update(rawBody).digest();
    if (timingSafeEqual(expected, presented)) ok = true;
  }
  return ok ? 'valid' : 'mismatch';
}
