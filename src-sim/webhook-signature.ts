import { createHmac } from 'node:crypto';

/**
 * The webhook signature of docs/wire-protocol.md section 7: lower-case hex HMAC-SHA256 with the webhook's
 * secret (UTF-8) as key over the exact raw body bytes, as the `X-Service-Signature` header value.
 * Self-contained on purpose: the relay verifies with its own code, so a bug here cannot hide a bug there.
 */
export const SIGNATURE_HEADER = 'X-Service-Signature';

export function signBody(secret: string, body: string | Uint8Array): string {
  const mac = createHmac('sha256', Buffer.from(secret, 'utf8'));
  mac.update(typeof body === 'string' ? Buffer.from(body, 'utf8') : body);
  return `sha256=${mac.digest('hex')}`;
}
