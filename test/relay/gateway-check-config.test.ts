/**
 * `--check-config` for a gateway tenant on Redis (docs/relay-protocol.md 2.4.1): several instances
 * share one stream by a lease, and a call that rings while another instance takes the stream over
 * reaches them only by webhook (the stream has no replay). A stream-only tenant (no webhook
 * secrets) on Redis is warned about, with the takeover time its lease gives; with webhooks, on
 * the memory store (one instance), or on a Yeastar P-Series (whose calls still ringing the new
 * holder asks for: gateway-catch-up.test.ts), it is not.
 */
import { describe, expect, it } from 'vitest';
import { checkConfig } from '../../src-relay/check-config.ts';
import { parseConfig } from '../../src-relay/config.ts';

const env = { ACME_KEY: 'key-1', ACME_SECRET: 'secret-0123456789abcdef' };
const gateway = { apiKeyEnv: 'ACME_KEY', secretEnv: 'ACME_SECRET' };

function report(tenant: Record<string, unknown>, storage: Record<string, unknown>) {
  const config = parseConfig({
    port: 8787,
    tenants: { acme: { baseUrl: 'https://acme.pbx.example', gateway, ...tenant } },
    storage,
  });
  return checkConfig(config, Date.now(), env);
}

const redis = { kind: 'redis', url: 'redis://127.0.0.1:6379', upstreamLeaseMs: 5_000 };
const WARNING = /tenants\.acme: a gateway stream without webhooks/;

describe('--check-config: a gateway stream and the takeover gap', () => {
  it('warns of a stream-only gateway tenant on Redis, with the takeover time of its lease', () => {
    const r = report({ secrets: [] }, redis);
    const warning = r.warnings.find((w) => WARNING.test(w));
    expect(warning).toBeDefined();
    expect(warning).toContain('up to 6 s, 1.2 times storage.upstreamLeaseMs');
    expect(warning).toContain('the webhook URL of every instance');
  });

  it('does not warn with webhook secrets, on the memory store (one instance), nor for a Yeastar P-Series (asked for the calls still ringing)', () => {
    const secrets = ['whsec-0123456789abcdef0123456789'];
    expect(report({ secrets }, redis).warnings.filter((w) => WARNING.test(w))).toEqual([]);
    const memory = { kind: 'memory', snapshotFile: '/tmp/gw-soak-relay.snapshot' };
    expect(report({ secrets: [] }, memory).warnings.filter((w) => WARNING.test(w))).toEqual([]);
    const yeastar = { secrets: [], phoneSystem: 'yeastar-p-series' };
    expect(report(yeastar, redis).warnings.filter((w) => WARNING.test(w))).toEqual([]);
  });
});
