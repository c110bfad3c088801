import type http from 'node:http';
import type { Clock } from '../src-shared/process/clock.ts';
import type { Logger } from '../src-shared/process/log.ts';
import type { RelayConfig } from './config.ts';
import { hasUnreadBody, reply } from './http-reply.ts';
import type { InFlight } from './in-flight.ts';
import { SampledLog } from './log-sampler.ts';
import type { RelayMetrics } from './metrics.ts';
import type { EventStore } from './store/types.ts';
import { pathOf, tenantInPath } from './tenants.ts';
import { handleWebhook } from './webhook-handler.ts';
import { YeastarIntake } from './yeastar-intake.ts';
import type { OrgRouteDeps } from './users/org-routes.ts';
import { orgRoutes } from './users/org-routes.ts';
import { callRoute, CALLS_PATH, type CallRouteDeps } from './calls/call-route.ts';
import { isLoopbackHost } from '../src-shared/net/loopback.ts';

export interface RouteDeps {
  config: RelayConfig;
  store: EventStore;
  metrics: RelayMetrics;
  logger: Logger;
  inFlight: InFlight;
  draining: () => boolean;
  clock: Clock;
  /** Organisation mode's requests (sign-in information, enrolment). */
  org?: Pick<OrgRouteDeps, 'users' | 'oidcInfo' | 'codeKey' | 'auth'>;
  /** Gateway mode: each tenant's upstream stream's state, for /healthz. */
  upstreams?: () => Record<string, { state: string; since: string }>;
  /** Organisation mode's call requests (calls/call-route.ts): who signs in, each tenant's call API. */
  calls?: Pick<CallRouteDeps, 'auth' | 'api' | 'rate'>;
}

/**
 * The relay's plain HTTP requests: `POST /webhook/<tenant>`, `/healthz`, `/readyz`, `/metrics`,
 * and organisation mode's `GET /v1/org/<tenant>`, `POST /v1/enrol/<tenant>` and
 * `POST /v1/claim/<tenant>` (users/org-routes.ts).
 * While draining, everything answers 503 with `Connection: close`. Only the two that take a body
 * (`takesBody`) read one: any other request that carries a body is answered 413 at once, before
 * its handler runs (/metrics once answered 200 while 64 MiB streamed in).
 */
export function requestHandler(
  deps: RouteDeps,
): (req: http.IncomingMessage, res: http.ServerResponse) => void {
  const { config, store, metrics, logger } = deps;
  const webhookLogger = logger.child({ component: 'webhook' });
  const rejectedLog = new SampledLog(webhookLogger, 'info', 'webhook rejected', deps.clock);
  const now = () => deps.clock.now();
  // Yeastar P-Series tenants' deliveries are decoded here (one decoder per tenant, this process;
  // on Redis a call's memory is the store's, shared by every instance: call-memory-redis.ts).
  const yeastar = new YeastarIntake(() => deps.clock.monotonic(), store.callMemory);
  const org = orgRoutes({
    config,
    users: deps.org?.users ?? null,
    metrics,
    logger,
    clock: deps.clock,
    ...(deps.org?.oidcInfo ? { oidcInfo: deps.org.oidcInfo } : {}),
    codeKey: deps.org?.codeKey ?? null,
    ...(deps.org?.auth ? { auth: deps.org.auth, store } : {}),
  });
  const calls = callRoute({
    config,
    auth: deps.calls?.auth,
    api: deps.calls?.api ?? (() => undefined),
    ...(deps.calls?.rate ? { rate: deps.calls.rate } : {}),
    logger,
    now,
    monotonic: () => deps.clock.monotonic(),
  });
  return (req, res) => {
    const path = pathOf(req.url);
    if (deps.draining()) {
      res.setHeader('Connection', 'close');
      res.setHeader('Retry-After', '1');
      return reply(res, 503, { ok: false, error: 'relay shutting down' });
    }
    if (!takesBody(path) && hasUnreadBody(req))
      return reply(res, 413, { ok: false, error: 'this path takes no request body' });
    // /metrics and /healthz's detail name tenants: with metricsFrom "loopback", for this host only.
    const mayReadOps =
      config.metricsFrom === 'anywhere' ||
      isLoopbackHost((req.socket.remoteAddress ?? '').replace(/^::ffff:/, ''));
    if (path === '/healthz') {
      // Alive whatever the upstream does (a restart would not bring the phone system back); its
      // state is detail for the administrator and the metric relay_upstream_state.
      const upstream = mayReadOps ? deps.upstreams?.() : undefined;
      return reply(res, 200, {
        ok: true,
        ...(upstream && Object.keys(upstream).length > 0 && { upstream }),
      });
    }
    if (path === '/readyz') {
      // The store's ping is bounded (Redis: commandTimeoutMs): a hung backend is not ready.
      // Redis' server and reconnects are detail for the administrator (as /healthz's upstream).
      const health = () => {
        const h = mayReadOps ? store.storageHealth?.() : undefined;
        return (
          h && {
            primary: h.primary,
            reconnects: h.reconnects,
            primaryChanges: h.primaryChanges,
            ...(h.cluster && { cluster: h.cluster }),
          }
        );
      };
      store.ping().then(
        () => reply(res, 200, { ok: true, storage: store.kind, ...health() }),
        () =>
          reply(res, 503, {
            ok: false,
            storage: store.kind,
            error: 'storage unreachable',
            ...health(),
          }),
      );
      return;
    }
    if (path === '/metrics') {
      if (!mayReadOps) return reply(res, 404, { ok: false, error: 'not found' });
      metrics.render().then(
        (text) => {
          res.writeHead(200, { 'Content-Type': metrics.contentType });
          res.end(text);
        },
        (err: Error) => {
          logger.error('metrics not rendered', { error: err });
          reply(res, 500, { ok: false, error: 'metrics unavailable' });
        },
      );
      return;
    }
    if (org(req, res, path)) return;
    if (calls(req, res, path)) return;
    const tenant = tenantInPath(config.tenants, path, '/webhook/');
    if (tenant === 'no-match') return reply(res, 404, { ok: false, error: 'not found' });
    // A PBX lets its administrator choose GET for a webhook (Yeastar: "Request Method"); say what to pick.
    if (req.method !== 'POST')
      return reply(res, 405, {
        ok: false,
        error: "POST only: set the webhook's request method to POST in the phone system",
      });
    if (!tenant) {
      // Answered as a wrong signature is, not 404, so that the webhook path does not tell which
      // tenants exist (issue 33 item 5); the log and the metric say unknown-tenant.
      metrics.received += 1;
      metrics.reject('unknown-tenant');
      rejectedLog.write({ status: 401, reason: 'unknown-tenant' });
      return reply(res, 401, { ok: false, error: 'signature missing or invalid' });
    }
    deps.inFlight.track(
      handleWebhook(req, res, tenant.name, tenant.config, {
        store,
        metrics,
        logger: webhookLogger,
        rejectedLog,
        maxBodyBytes: config.maxBodyBytes,
        now,
        yeastar,
        trustProxy: config.trustProxy,
      }).catch((err: Error) => {
        logger.error('webhook handler failed', { error: err });
        reply(res, 500, { ok: false, error: 'internal error' });
      }),
    );
  };
}

/** The paths whose requests carry a body: the webhook intake, organisation mode's enrolment, claims and calls. */
function takesBody(path: string): boolean {
  return (
    path.startsWith('/webhook/') ||
    path.startsWith('/v1/enrol/') ||
    path.startsWith('/v1/claim/') ||
    path.startsWith(CALLS_PATH)
  );
}
