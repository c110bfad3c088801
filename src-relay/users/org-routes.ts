import type http from 'node:http';
import type { Clock } from '../../src-shared/process/clock.ts';
import type { Logger } from '../../src-shared/process/log.ts';
import type { OrgSignInInfo } from '../../src-shared/relay/relay-protocol.ts';
import { clientAddress } from '../admission.ts';
import type { RelayConfig } from '../config.ts';
import { reply } from '../http-reply.ts';
import type { RelayMetrics } from '../metrics.ts';
import { SampledLog } from '../log-sampler.ts';
import { RefusalBudget } from '../refusal-budget.ts';
import { tenantInPath } from '../tenants.ts';
import type { EventStore } from '../store/types.ts';
import { claimBuckets, handleClaim } from './claim-route.ts';
import { handleEnrol } from './enrol-route.ts';
import type { UserStore } from './types.ts';
import type { UserAuthenticator } from './user-auth.ts';

export interface OrgRouteDeps {
  config: RelayConfig;
  users: UserStore | null;
  metrics: RelayMetrics;
  logger: Logger;
  clock: Clock;
  /** The key enrolment codes are stored under (code-key.ts); null or absent: plain SHA-256. */
  codeKey?: string | null;
  /** The tenant's OpenID provider as desktops should use it, when configured. */
  oidcInfo?: (tenant: string) => OrgSignInInfo['oidc'];
  /** Who a user's credential is (the stream's handshake's check): claims need it. */
  auth?: UserAuthenticator;
  /** Where claims of calls' logs are kept (the relay's event store). */
  store?: EventStore;
}

/**
 * The organisation-mode requests: `GET /v1/org/<tenant>` (how to sign in) and
 * `POST /v1/enrol/<tenant>` (an enrolment code for a device credential) and
 * `POST /v1/claim/<tenant>` (a signed-in user claims a call's CRM log: claim-route.ts). A tenant
 * without `access: "users"` answers 404 on each, as an unknown one does. Returns false for other paths.
 */
export function orgRoutes(
  deps: OrgRouteDeps,
): (req: http.IncomingMessage, res: http.ServerResponse, path: string) => boolean {
  const refusals = new RefusalBudget(deps.config.auth.maxFailuresPerAddressPerMinute, () =>
    deps.clock.monotonic(),
  );
  const logger = deps.logger.child({ component: 'enrol' });
  const refusedLog = new SampledLog(logger, 'info', 'enrolment code refused', deps.clock);
  const failedLog = new SampledLog(logger, 'error', 'enrolment not stored', deps.clock);
  const brokenLog = new SampledLog(logger, 'error', 'enrolment failed', deps.clock);
  const claimRefusals = new RefusalBudget(deps.config.auth.maxFailuresPerAddressPerMinute, () =>
    deps.clock.monotonic(),
  );
  const buckets = claimBuckets();
  const claimLogger = deps.logger.child({ component: 'claim' });
  const claimRefusedLog = new SampledLog(claimLogger, 'info', 'call claim refused', deps.clock);
  const claimFailedLog = new SampledLog(claimLogger, 'error', 'call claim not stored', deps.clock);
  const usersTenant = (path: string, prefix: '/v1/org/' | '/v1/enrol/' | '/v1/claim/') => {
    const t = tenantInPath(deps.config.tenants, path, prefix);
    if (t === 'no-match') return 'no-match';
    return t && t.config.access === 'users' && deps.users ? t : null;
  };
  return (req, res, path) => {
    const info = usersTenant(path, '/v1/org/');
    if (info !== 'no-match') {
      if (!info) return (reply(res, 404, { errcode: 0, errmsg: 'unknown tenant' }), true);
      if (req.method !== 'GET') return (reply(res, 405, { errcode: 0, errmsg: 'GET only' }), true);
      const answer: OrgSignInInfo = {
        tenant: info.name,
        oidc: deps.oidcInfo?.(info.name) ?? null,
        enrolment: true,
      };
      reply(res, 200, answer);
      return true;
    }
    const claim = usersTenant(path, '/v1/claim/');
    if (claim !== 'no-match') {
      if (!claim || !deps.auth || !deps.store)
        return (reply(res, 404, { errcode: 0, errmsg: 'unknown tenant' }), true);
      if (req.method !== 'POST')
        return (reply(res, 405, { errcode: 0, errmsg: 'POST only' }), true);
      handleClaim(req, res, claim.name, clientAddress(req, deps.config.trustProxy), {
        auth: deps.auth,
        store: deps.store,
        refusals: claimRefusals,
        buckets,
        monotonic: () => deps.clock.monotonic(),
        refusedLog: claimRefusedLog,
        failedLog: claimFailedLog,
      }).catch((err: Error) => {
        brokenLog.write({ error: err });
        if (!res.headersSent) reply(res, 500, { errcode: 0, errmsg: 'internal error' });
      });
      return true;
    }
    const enrol = usersTenant(path, '/v1/enrol/');
    if (enrol === 'no-match') return false;
    if (!enrol) return (reply(res, 404, { errcode: 0, errmsg: 'unknown tenant' }), true);
    if (req.method !== 'POST') return (reply(res, 405, { errcode: 0, errmsg: 'POST only' }), true);
    handleEnrol(req, res, enrol.name, clientAddress(req, deps.config.trustProxy), {
      users: deps.users!,
      metrics: deps.metrics,
      logger,
      refusals,
      refusedLog,
      failedLog,
      codeKey: deps.codeKey ?? null,
      now: () => deps.clock.now(),
    }).catch((err: Error) => {
      brokenLog.write({ error: err });
      reply(res, 500, { errcode: 0, errmsg: 'internal error' });
    });
    return true;
  };
}
