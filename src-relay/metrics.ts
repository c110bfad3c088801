import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { CloseCode } from '../src-shared/relay/relay-protocol.ts';
import type { StorageHealth } from './store/types.ts';

/**
 * The relay's metrics (GET /metrics, Prometheus text format), through prom-client with a registry
 * of this relay's own (no process-wide default registry), plus Node's standard process metrics
 * (`process_cpu_seconds_total`, `process_resident_memory_bytes`, `nodejs_eventloop_lag_*`, heap
 * and GC). Hot counters (one increment per delivered frame) are plain numbers read at scrape
 * time. Labels only ever take values from fixed lists, so no client can mint a series.
 */
const LAG_BUCKETS_MS = [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 60000];

/**
 * The two steps of the live path before the kernel (issue 40 item 4: what costs what), finer at
 * the low end, where the storages differ (a Redis round trip and an fsync are a few ms).
 */
const STEP_BUCKETS_MS = [1, 2, 3, 5, 7.5, 10, 15, 25, 50, 100, 250, 1000, 5000];

/** Close codes that get their own label value; any other code a client chooses counts as "other". */
const KNOWN_CLOSE_CODES = new Set<number>([
  1000,
  1001,
  1005,
  1006,
  1009,
  ...Object.values(CloseCode),
]);

export const REJECT_REASONS = [
  'signature-missing',
  'signature-malformed',
  'signature-mismatch',
  'too-large',
  'not-json',
  'not-utf8',
  'not-envelope',
  'tenant-mismatch',
  'unknown-tenant',
  'storage-error',
  'aborted',
  'source-not-allowed',
] as const;
export type RejectReason = (typeof REJECT_REASONS)[number];

export const HANDSHAKE_REFUSALS = [
  'draining',
  'unknown-tenant',
  'no-token',
  'token-rejected',
  'token-forbidden',
  'service-unavailable',
  'rate-limited',
  'too-many-sessions',
  'sign-in-refused',
  'not-mapped',
] as const;
export type HandshakeRefusal = (typeof HANDSHAKE_REFUSALS)[number];

/** Outcomes of POST /v1/enrol/<tenant> (a fixed list, for the metric's label). */
export const ENROLMENT_RESULTS = [
  'enrolled',
  'code-refused',
  'malformed',
  'rate-limited',
  'storage-error',
] as const;
export type EnrolmentResult = (typeof ENROLMENT_RESULTS)[number];

/** Gateway mode: the states of a tenant's upstream stream (gateway/upstream.ts). */
export const UPSTREAM_STATES = [
  'connecting',
  'connected',
  'reconnecting',
  'refused',
  // Another relay instance holds the tenant's upstream lease (gateway/lease.ts).
  'standby',
] as const;
export type UpstreamState = (typeof UPSTREAM_STATES)[number];

export class RelayMetrics {
  received = 0;
  stored = 0;
  duplicates = 0;
  /** Yeastar deliveries that were byte copies of an earlier one that rang (webhook-handler.ts). */
  copies = 0;
  delivered = 0;
  replayed = 0;
  gaps = 0;
  readonly rejected = new Map<RejectReason, number>();
  readonly clientsClosed = new Map<string, number>();
  readonly handshakesRefused = new Map<HandshakeRefusal, number>();
  readonly enrolments = new Map<EnrolmentResult, number>();
  /** Sessions closed because their user was revoked or changed (organisation mode). */
  usersEnded = 0;
  /** Gateway mode: frames of the relay's own upstream streams, by tenant and result. */
  readonly upstreamEvents = new Map<string, number>();
  /** Gateway mode: each upstream's state, read at scrape time (tenant -> state). */
  upstreamStates: () => ReadonlyMap<string, UpstreamState> = () => new Map();
  /** A networked store's connection (Redis: store/redis-store.ts), read at scrape time. */
  storageHealth: () => StorageHealth | undefined = () => undefined;
  /** Read at scrape time. */
  connectedClients: () => number = () => 0;
  /** Unsent bytes held for all clients (the send budget's count), read at scrape time. */
  unsentBytes: () => number = () => 0;
  /** Token checks waiting for a turn at the service, read at scrape time. */
  authQueued: () => number = () => 0;
  readonly registry = new Registry();
  private readonly lag: Histogram;
  private readonly handover: Histogram;
  private readonly fanout: Histogram;

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    const total = (name: string, help: string, read: () => number) =>
      new Counter({
        name,
        help,
        registers,
        collect() {
          this.reset();
          this.inc(read());
        },
      });
    const byLabel = (name: string, help: string, label: string, read: () => Map<string, number>) =>
      new Counter({
        name,
        help,
        labelNames: [label],
        registers,
        collect() {
          this.reset();
          for (const [value, n] of read()) this.inc({ [label]: value }, n);
        },
      });
    const gauge = (name: string, help: string, read: () => number) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(read());
        },
      });
    total('relay_webhooks_received_total', 'Webhook POSTs received.', () => this.received);
    byLabel(
      'relay_webhooks_rejected_total',
      'Webhooks refused, by reason.',
      'reason',
      () => this.rejected,
    );
    total(
      'relay_webhooks_duplicate_total',
      'Webhooks acknowledged as duplicates (event_id seen) and not forwarded.',
      () => this.duplicates,
    );
    total(
      'relay_webhooks_copies_total',
      'Yeastar deliveries that were copies of an earlier one that rang: acknowledged, not decoded.',
      () => this.copies,
    );
    total('relay_events_stored_total', 'Events durably stored.', () => this.stored);
    total(
      'relay_events_delivered_total',
      'Event frames sent to clients (live and replayed).',
      () => this.delivered,
    );
    total(
      'relay_events_replayed_total',
      'Event frames sent while resuming from a cursor.',
      () => this.replayed,
    );
    const health = (read: (h: StorageHealth) => number) => () => {
      const h = this.storageHealth();
      return h ? read(h) : 0;
    };
    gauge(
      'relay_storage_connected',
      'Redis: 1 while the command connection is up (0 with the memory store).',
      health((h) => (h.connected ? 1 : 0)),
    );
    total(
      'relay_storage_reconnects_total',
      'Redis: times the command connection came back after it was lost.',
      health((h) => h.reconnects),
    );
    gauge(
      'relay_storage_cluster_ok',
      'Redis Cluster: 1 while a majority of the primaries that answered the last readiness check said cluster_state:ok (0 otherwise, and without a cluster).',
      health((h) => (h.cluster?.state === 'ok' ? 1 : 0)),
    );
    gauge(
      'relay_storage_cluster_unreachable_primaries',
      'Redis Cluster: primaries of the slot map that did not answer the last readiness check.',
      health((h) => h.cluster?.unreachable ?? 0),
    );
    total(
      'relay_storage_primary_changes_total',
      "Redis: times it came back to another server (a Sentinel failover followed), or a Cluster's primaries changed (a failover, a resharding).",
      health((h) => h.primaryChanges),
    );
    total(
      'relay_storage_replica_wait_failures_total',
      'Redis: webhooks answered 503 because fewer than storage.minReplicas replicas had their event in time.',
      health((h) => h.waitFailures),
    );
    total(
      'relay_storage_unconfirmed_primary_total',
      'Redis Sentinel: connections left because a majority of the sentinels did not name their server as the primary.',
      health((h) => h.unconfirmedPrimaries),
    );
    total(
      'relay_storage_unvouched_writes_total',
      'Redis Sentinel: webhooks answered 503 (and upstream lease asks refused) because the sentinels no longer vouched for the server written to (a failover under way).',
      health((h) => h.unvouchedWrites),
    );
    total('relay_gap_notices_total', 'Gap notices sent to resuming clients.', () => this.gaps);
    byLabel(
      'relay_clients_closed_total',
      'Client connections closed, by close code (codes outside the protocol count as "other").',
      'code',
      () => this.clientsClosed,
    );
    byLabel(
      'relay_handshakes_refused_total',
      'Client handshakes refused, by reason.',
      'reason',
      () => this.handshakesRefused,
    );
    byLabel(
      'relay_enrolments_total',
      'Enrolment codes presented, by result.',
      'result',
      () => this.enrolments,
    );
    total(
      'relay_user_sessions_ended_total',
      'Sessions closed because their user was revoked or their extensions changed.',
      () => this.usersEnded,
    );
    new Counter({
      name: 'relay_upstream_events_total',
      help: "Event frames of the gateway's own upstream stream, by tenant and result (stored, duplicate: already delivered by a webhook or the stream, rejected, storage-error).",
      labelNames: ['tenant', 'result'],
      registers,
      collect: () => {
        const counter = this.registry.getSingleMetric('relay_upstream_events_total') as Counter;
        counter.reset();
        for (const [key, n] of this.upstreamEvents) {
          const [tenant, result] = key.split('\u0000') as [string, string];
          counter.inc({ tenant, result }, n);
        }
      },
    });
    new Gauge({
      name: 'relay_upstream_state',
      help: "Gateway mode: 1 for the current state of each tenant's upstream stream (connecting, connected, reconnecting, refused), 0 for the others.",
      labelNames: ['tenant', 'state'],
      registers,
      collect: () => {
        const gauge = this.registry.getSingleMetric('relay_upstream_state') as Gauge;
        gauge.reset();
        for (const [tenant, current] of this.upstreamStates())
          for (const state of UPSTREAM_STATES)
            gauge.set({ tenant, state }, state === current ? 1 : 0);
      },
    });
    gauge('relay_connected_clients', 'Client WebSockets connected now.', () =>
      this.connectedClients(),
    );
    gauge('relay_unsent_bytes', 'Bytes queued for clients and not yet sent.', () =>
      this.unsentBytes(),
    );
    gauge('relay_auth_queue', 'Token checks waiting for a turn at the service.', () =>
      this.authQueued(),
    );
    this.lag = new Histogram({
      name: 'relay_delivery_lag_ms',
      help: 'Webhook arrival (at any instance) to the frame written out to the client socket, live deliveries (the oldest event of each write).',
      buckets: LAG_BUCKETS_MS,
      registers,
    });
    this.handover = new Histogram({
      name: 'relay_store_handover_ms',
      help: "Webhook arrival (at any instance, on that instance's clock) to the store handing its event to this instance's fan-out (memory: the next turn; Redis: the append, its fsync and the follower's read), the oldest event of each batch.",
      buckets: STEP_BUCKETS_MS,
      registers,
    });
    this.fanout = new Histogram({
      name: 'relay_fanout_ms',
      help: 'Time to offer one batch of live events to every session of this instance (frames written to the sockets or queued).',
      buckets: STEP_BUCKETS_MS,
      registers,
    });
  }

  upstream(
    tenant: string,
    result: 'stored' | 'duplicate' | 'rejected' | 'storage-error' | 'fenced',
  ): void {
    const key = `${tenant}\u0000${result}`;
    this.upstreamEvents.set(key, (this.upstreamEvents.get(key) ?? 0) + 1);
  }

  reject(reason: RejectReason): void {
    this.rejected.set(reason, (this.rejected.get(reason) ?? 0) + 1);
  }

  refuseHandshake(reason: HandshakeRefusal): void {
    this.handshakesRefused.set(reason, (this.handshakesRefused.get(reason) ?? 0) + 1);
  }

  enrolment(result: EnrolmentResult): void {
    this.enrolments.set(result, (this.enrolments.get(result) ?? 0) + 1);
  }

  clientClosed(code: number): void {
    const k = KNOWN_CLOSE_CODES.has(code) ? String(code) : 'other';
    this.clientsClosed.set(k, (this.clientsClosed.get(k) ?? 0) + 1);
  }

  /** Time from the webhook's arrival (at any instance) to its bytes leaving for the client. */
  observeLag(ms: number): void {
    this.lag.observe(Math.max(0, ms));
  }

  /** From the webhook's arrival to the store's hand-over of its event to this instance. */
  observeHandover(ms: number): void {
    this.handover.observe(Math.max(0, ms));
  }

  /** The time one batch took to go through the fan-out. */
  observeFanout(ms: number): void {
    this.fanout.observe(Math.max(0, ms));
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
