/**
 * The relay's `fetch` for the service (token checks, auth.ts), a gateway's stream and token
 * (gateway/) and single sign-on (oidc.ts): over node:http(s) with Node's default agents (keep-alive,
 * Node's certificate authorities and NODE_EXTRA_CA_CERTS, as Node's fetch has), answering with a
 * LeanResponse (src-shared/lean-fetch.ts). Node's own fetch, loaded at the relay's first token
 * check, added ~16 MiB of resident memory (issue 24). Tests may pass their own (`deps.fetch`).
 */
import http from 'node:http';
import https from 'node:https';
import { leanFetch } from '../src-shared/lean-fetch.ts';

/** The service's, an identity provider's answers are small: a larger body is an error. */
const MAX_BODY_BYTES = 1024 * 1024;

// No `instanceof Request` here: touching the global Request loads Node's fetch.
export const relayFetch: typeof fetch = (input, init = {}) =>
  leanFetch(input, init, {
    agentFor: (secure) => (secure ? https.globalAgent : http.globalAgent),
    maxBodyBytes: MAX_BODY_BYTES,
  });
