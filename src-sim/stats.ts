import type { SimStats } from './types.ts';

/** Counters shared by the simulator's parts; `stats()` hands out a copy. */
export function createStats(): SimStats {
  return {
    getToken: 0,
    refreshToken: 0,
    delToken: 0,
    tokensValid: 0,
    tokensValidPeak: 0,
    extensionList: 0,
    tokenExpiredRejections: 0,
    wsConnections: 0,
    wsOpen: 0,
    eventsSent: 0,
    webhookAttempts: 0,
    webhookDelivered: 0,
    webhookFailedAttempts: 0,
    webhookGaveUp: 0,
    webhookPending: 0,
  };
}
