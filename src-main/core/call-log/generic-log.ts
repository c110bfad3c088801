/**
 * The generic HTTPS connector's call logging: one POST per call (and one more per later revision,
 * a note added), to the URL the settings name, with the JSON body docs/crm/call-log-webhook.md
 * documents. Signed so a receiver can refuse forgeries and replays, like the relay's webhooks
 * (HMAC-SHA256 keyed with the shared secret's UTF-8 bytes) but over the timestamp and the body:
 *
 *   X-Screenpop-Timestamp: <Unix seconds>
 *   X-Screenpop-Signature: sha256=<hex HMAC-SHA256(secret, "<timestamp>.<raw body>")>
 *   Idempotency-Key: <the call's id>
 *
 * The receiver recomputes the HMAC over the exact bytes, compares in constant time, refuses a
 * timestamp more than 5 minutes from its clock, and keeps the call's id: a second POST with the
 * same key (a retry after a time-out, or a higher `revision`) updates the call it has. So an
 * uncertain POST is simply sent again (`find` never needs the CRM), and the CRM's id of the call
 * is the call's id.
 */
import { createHmac } from 'node:crypto';
import type { Clock } from '../../../src-shared/process/clock.ts';
import type { SecretRegistry } from '../../../src-shared/process/log.ts';
import { CrmError } from '../crm/connector.ts';
import { exchangeJson, retryAfterMs, statusError } from '../crm/http.ts';
import type { CallLogRecord } from '../ports/call-log.ts';
import type { CallLogWriter } from './queue.ts';

export const SIGNATURE_HEADER = 'x-screenpop-signature';
export const TIMESTAMP_HEADER = 'x-screenpop-timestamp';
export const IDEMPOTENCY_HEADER = 'idempotency-key';

export interface GenericCallWriterDeps {
  fetch: typeof fetch;
  clock: Clock;
  secrets: SecretRegistry;
  /** The receiver's HTTPS URL. */
  url: string;
  /** The shared signing secret from the keychain; null when none is stored. */
  secret: () => Promise<string | null>;
}

/** The signature header's value for a body sent at `timestamp` (Unix seconds). */
export function callLogSignature(secret: string, timestamp: number, body: string): string {
  return `sha256=${createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${timestamp}.${body}`).digest('hex')}`;
}

/** The JSON body of one POST (docs/crm/call-log-webhook.md). */
export function callLogBody(record: CallLogRecord, revision: number): object {
  const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());
  return {
    version: 1,
    callId: record.callId,
    revision,
    direction: record.direction,
    from: record.from,
    to: record.to,
    extension: record.extension,
    startedAt: iso(record.startedAt),
    answeredAt: iso(record.answeredAt),
    endedAt: iso(record.endedAt),
    durationMs: Math.max(0, Math.round(record.durationMs)),
    outcome: record.outcome,
    contactId: record.contactId ?? null,
    note: record.note ?? null,
    disposition: record.disposition ?? null,
  };
}

export class GenericCallWriter implements CallLogWriter {
  readonly kind = 'generic' as const;
  private readonly d: GenericCallWriterDeps;
  private readonly revisions = new Map<string, number>();

  constructor(deps: GenericCallWriterDeps) {
    this.d = deps;
  }

  async create(record: CallLogRecord, _marker: string, signal: AbortSignal): Promise<string> {
    await this.post(record, signal);
    return record.callId;
  }

  async update(
    _crmId: string,
    record: CallLogRecord,
    _marker: string,
    signal: AbortSignal,
  ): Promise<void> {
    await this.post(record, signal);
  }

  /** Never asked: an uncertain POST is sent again under the same idempotency key. */
  find(): Promise<string | null> {
    return Promise.resolve(null);
  }

  private async post(record: CallLogRecord, signal: AbortSignal): Promise<void> {
    const secret = await this.d.secret();
    if (!secret) throw new CrmError('no-credentials', 'no signing secret is stored');
    this.d.secrets.add(secret);
    // The revision is the wall-clock ms of this POST: later sends are always higher, across restarts.
    const revision = Math.max(this.d.clock.now(), (this.revisions.get(record.callId) ?? 0) + 1);
    this.revisions.set(record.callId, revision);
    if (this.revisions.size > 1_000) this.revisions.delete(this.revisions.keys().next().value!);
    const body = JSON.stringify(callLogBody(record, revision));
    const timestamp = Math.floor(this.d.clock.now() / 1000);
    const answer = await exchangeJson(
      this.d.fetch,
      this.d.url,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          [TIMESTAMP_HEADER]: String(timestamp),
          [SIGNATURE_HEADER]: callLogSignature(secret, timestamp, body),
          [IDEMPOTENCY_HEADER]: record.callId,
        },
        body,
      },
      signal,
    );
    if (answer.status >= 200 && answer.status < 300) return;
    const wait = retryAfterMs(answer.headers, this.d.clock.now());
    if (
      answer.status === 401 ||
      answer.status === 403 ||
      answer.status === 429 ||
      answer.status >= 500
    )
      throw statusError(answer.status, wait);
    throw new CrmError('bad-answer', `the receiver refused the call (${answer.status})`, {
      status: answer.status,
    });
  }
}
