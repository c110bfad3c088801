/**
 * The environment of a child process that a test starts with a minimal environment of its own:
 * PATH, the test's clock, and what the test adds.
 *
 * CI runs the suite a second time five years ahead, with libfaketime preloaded through
 * LD_PRELOAD and FAKETIME. A child started without those runs on today's date while the test,
 * and everything it made (certificates, tokens, files), is five years ahead: the runner's HubSpot
 * lookup failed only in that run, its certificate "not yet valid". Programs that cannot start
 * under libfaketime (Chromium, redis-server) leave the clock out on purpose: see
 * browser/support/chromium.ts and blackbox/services.ts.
 */
const CLOCK = ['LD_PRELOAD', 'FAKETIME', 'FAKETIME_DONT_FAKE_MONOTONIC'] as const;

export function childEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '' };
  for (const name of CLOCK) if (process.env[name] !== undefined) env[name] = process.env[name];
  return { ...env, ...extra };
}
