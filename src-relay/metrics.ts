/**
 * The relay's metrics in the Prometheus text exposition format (GET /metrics). Small on purpose:
 * counters with at most one label, gauges read at scrape time, one histogram for delivery lag.
 */
const LAG_BUCKETS_MS = [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 60000];

export class RelayMetrics {
  received = 0;
  stored = 0;
  duplicates = 0;
  delivered = 0;
  readonly rejected = new Map<string, number>();
  readonly clientsClosed = new Map<string, number>();
  replayed = 0;
  gaps = 0;
  private readonly lagCounts = new Array<number>(LAG_BUCKETS_MS.length).fill(0);
  private lagCount = 0;
  private lagSum = 0;
  /** Read at scrape time. */
  connectedClients: () => number = () => 0;

  reject(reason: string): void {
    this.rejected.set(reason, (this.rejected.get(reason) ?? 0) + 1);
  }

  clientClosed(code: number): void {
    const k = String(code);
    this.clientsClosed.set(k, (this.clientsClosed.get(k) ?? 0) + 1);
  }

  /** Time from the webhook's arrival (at any instance) to the frame being handed to a socket. */
  observeLag(ms: number): void {
    const v = Math.max(0, ms);
    for (let i = 0; i < LAG_BUCKETS_MS.length; i++)
      if (v <= LAG_BUCKETS_MS[i]!) this.lagCounts[i]! += 1;
    this.lagCount += 1;
    this.lagSum += v;
  }

  render(): string {
    const lines: string[] = [];
    const counter = (name: string, help: string, value: number) =>
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} counter`, `${name} ${value}`);
    counter('relay_webhooks_received_total', 'Webhook POSTs received.', this.received);
    lines.push(
      '# HELP relay_webhooks_rejected_total Webhooks refused, by reason.',
      '# TYPE relay_webhooks_rejected_total counter',
    );
    for (const [reason, n] of this.rejected)
      lines.push(`relay_webhooks_rejected_total{reason="${reason}"} ${n}`);
    counter(
      'relay_webhooks_duplicate_total',
      'Webhooks acknowledged as duplicates (event_id seen) and not forwarded.',
      this.duplicates,
    );
    counter('relay_events_stored_total', 'Events durably stored.', this.stored);
    counter(
      'relay_events_delivered_total',
      'Event frames sent to clients (live and replayed).',
      this.delivered,
    );
    counter(
      'relay_events_replayed_total',
      'Event frames sent while resuming from a cursor.',
      this.replayed,
    );
    counter('relay_gap_notices_total', 'Gap notices sent to resuming clients.', this.gaps);
    lines.push(
      '# HELP relay_clients_closed_total Client connections closed, by close code.',
      '# TYPE relay_clients_closed_total counter',
    );
    for (const [code, n] of this.clientsClosed)
      lines.push(`relay_clients_closed_total{code="${code}"} ${n}`);
    lines.push(
      '# HELP relay_connected_clients Client WebSockets connected now.',
      '# TYPE relay_connected_clients gauge',
      `relay_connected_clients ${this.connectedClients()}`,
    );
    lines.push(
      '# HELP relay_delivery_lag_ms Webhook arrival to frame sent, live deliveries.',
      '# TYPE relay_delivery_lag_ms histogram',
    );
    LAG_BUCKETS_MS.forEach((le, i) =>
      lines.push(`relay_delivery_lag_ms_bucket{le="${le}"} ${this.lagCounts[i]}`),
    );
    lines.push(
      `relay_delivery_lag_ms_bucket{le="+Inf"} ${this.lagCount}`,
      `relay_delivery_lag_ms_sum ${this.lagSum}`,
      `relay_delivery_lag_ms_count ${this.lagCount}`,
    );
    return lines.join('\n') + '\n';
  }
}
