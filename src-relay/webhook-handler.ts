import type { IncomingMessage, ServerResponse } from 'node:http';
import type { BlockList } from 'node:net';
import type { Logger } from '../src-shared/process/log.ts';
import { addressList, type TenantConfig } from './config.ts';
import { clientAddress } from './admission.ts';
import { reply } from './http-reply.ts';
import { readEnvelope } from './envelope.ts';
import type { SampledLog } from './log-sampler.ts';
import type { RejectReason, RelayMetrics } from './metrics.ts';
import { verifyWebhookSignature } from './signature.ts';
import { wireFor } from '../src-shared/wire/index.ts';
import type { EventStore } from './store/types.ts';
import type { IntakeEvent, YeastarIntake } from './yeastar-intake.ts';

export interface WebhookDeps {
  store: EventStore;
  metrics: RelayMetrics;
  logger: Logger;
  /** "webhook rejected", at most 10 lines per 10 s (anyone can post garbage). */
  rejectedLog: SampledLog;
  maxBodyBytes: number;
  now: () => number;
  /** Decodes a Yeastar P-Series tenant's deliveries (yeastar-intake.ts). */
  yeastar: YeastarIntake;
  /** Client addresses from X-Forwarded-For (behind a reverse proxy), for `allowFrom`. */
  trustProxy: boolean;
}

/**
 * POST /webhook/<tenant>. Order matters: size limit while reading, signature over the exact raw
 * bytes, only then JSON, then storage; the 2xx goes out only once the store has the event, so the
 * service retries anything we did not keep. Nothing is forwarded from here: clients get events
 * from the store's feed.
 */
export async function handleWebhook(
  req: IncomingMessage,
  res: ServerResponse,
  tenant: string,
  config: TenantConfig,
  deps: WebhookDeps,
): Promise<void> {
  const { metrics, logger } = deps;
  metrics.received += 1;
  const reject = (status: number, reason: RejectReason, message: string) => {
    metrics.reject(reason);
    deps.rejectedLog.write({ tenant, status, reason });
    reply(res, status, { ok: false, error: message });
  };

  // A tenant that names where its deliveries come from refuses any other address before reading.
  const allowed = allowList(config);
  if (allowed) {
    const address = clientAddress(req, deps.trustProxy);
    const family = address.includes(':') ? 'ipv6' : 'ipv4';
    if (!allowed.check(address, family))
      return reject(403, 'source-not-allowed', 'deliveries are not accepted from this address');
  }

  // A body over the limit is refused without reading it (reply() closes the connection).
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > deps.maxBodyBytes)
    return reject(413, 'too-large', 'body too large');
  const raw = await readBody(req, deps.maxBodyBytes);
  if (raw === 'too-large') return reject(413, 'too-large', 'body too large');
  if (raw === 'aborted') {
    metrics.reject('aborted');
    return;
  }

  const { webhook } = wireFor(config.phoneSystem);
  const verdict = verifyWebhookSignature(
    raw,
    req.headers[webhook.signatureHeader],
    config.secrets,
    webhook.signatureForm,
  );
  if (verdict !== 'valid')
    return reject(401, `signature-${verdict}`, 'signature missing or invalid');

  let decoded: DeliveryResult;
  try {
    decoded = await decodeDelivery(tenant, config, raw, deps.yeastar, deps.now());
  } catch (err) {
    // The shared call memory (Redis) failed: a storage fault, retried by the phone system.
    metrics.reject('storage-error');
    logger.error('webhook not decoded: call memory unavailable', { tenant, error: err });
    res.setHeader('Retry-After', '5');
    return reply(res, 503, { ok: false, error: 'not stored; retry' });
  }
  if (!decoded.ok) return reject(400, decoded.reason, decoded.error);
  if (decoded.replay) {
    // A copy of a delivery that rang and was kept (yeastar-intake.ts): acknowledged, as the PBX
    // expects of a delivery it retried, and stored as nothing.
    metrics.copies += 1;
    logger.debug('webhook copy acknowledged', { tenant });
    return reply(res, 200, { ok: true, duplicate: true });
  }
  const events = decoded.events;

  // The delivery's events together (one Redis script: one round trip, one fsync, one batch).
  let results;
  try {
    const receivedAt = deps.now();
    results = await deps.store.appendAll(events.map((e) => ({ tenant, ...e, receivedAt })));
  } catch (err) {
    metrics.reject('storage-error');
    logger.error('webhook not stored', { tenant, error: err });
    res.setHeader('Retry-After', '5');
    return reply(res, 503, { ok: false, error: 'not stored; retry' });
  }
  let stored = 0;
  let cursor: string | undefined;
  for (const [i, result] of results.entries()) {
    if (result.status === 'duplicate') {
      metrics.duplicates += 1;
      logger.debug('webhook duplicate acknowledged', { tenant, event_id: events[i]!.eventId });
      continue;
    }
    metrics.stored += 1;
    stored += 1;
    cursor = result.cursor;
  }
  decoded.delivered?.();
  if (stored === 0 && events.length > 0) return reply(res, 200, { ok: true, duplicate: true });
  reply(res, 200, { ok: true, ...(cursor !== undefined && { cursor }), stored });
}

export type DeliveryResult =
  | { ok: true; events: IntakeEvent[]; replay?: true; delivered?: () => void }
  | { ok: false; reason: RejectReason; error: string };

/**
 * One delivery of a tenant's phone system (a webhook's body, or a frame of the gateway's own
 * stream) as the events the store keeps: a Yeastar P-Series report decoded into the core's
 * envelopes, a standard envelope kept byte for byte (its tenant must be this one). The one reading
 * both ways in share, so an event carried by both has one event_id and is stored once.
 */
export async function decodeDelivery(
  tenant: string,
  config: TenantConfig,
  raw: Uint8Array,
  yeastar: YeastarIntake,
  now: number,
): Promise<DeliveryResult> {
  if (wireFor(config.phoneSystem).webhook.body === 'report') {
    // The vendor's report, decoded into the core's envelopes (none for a code desktops do not use).
    // Rejects when the shared call memory fails (yeastar-intake.ts).
    const decoded = await yeastar.receive(tenant, raw, now);
    if (!decoded.ok)
      return { ok: false, reason: decoded.reason, error: 'body is not a Yeastar P-Series report' };
    return decoded;
  }
  const parsed = readEnvelope(raw);
  if (!parsed.ok)
    return { ok: false, reason: parsed.reason, error: 'body is not a JSON event envelope' };
  const env = parsed.envelope;
  if (env.tenant !== tenant)
    return {
      ok: false,
      reason: 'tenant-mismatch',
      error: 'envelope tenant does not match the URL',
    };
  return {
    ok: true,
    events: [{ eventId: env.eventId, event: env.event, to: env.to, body: env.text }],
  };
}

const allowLists = new WeakMap<TenantConfig, BlockList | null>();

/** A tenant's `allowFrom` as one list (built once per config; the schema checked every entry). */
function allowList(config: TenantConfig): BlockList | null {
  let list = allowLists.get(config);
  if (list === undefined) {
    list = config.allowFrom?.length ? addressList(config.allowFrom) : null;
    allowLists.set(config, list);
  }
  return list;
}

/** A request's body, read with a running limit. */
export function readBody(
  req: IncomingMessage,
  limit: number,
): Promise<Buffer | 'too-large' | 'aborted'> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    req.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > limit) {
        done = true;
        resolve('too-large');
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!done) {
        done = true;
        resolve(Buffer.concat(chunks, size));
      }
    });
    req.on('error', () => {
      if (!done) {
        done = true;
        resolve('aborted');
      }
    });
    req.on('close', () => {
      if (!done) {
        done = true;
        resolve('aborted');
      }
    });
  });
}
