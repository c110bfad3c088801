/**
 * Token-lifecycle figures (the measurements in src-main/core/api/README.md), against the simulator over real sockets with client and
 * simulator on one FakeClock (test/api/token-scenarios.ts):
 *   (a) a simulated 48-hour run, one extension/list call a minute through TokenManager.call;
 *   (b) 100 concurrent calls at the instant of expiry (wall clock at expiry; and the service
 *       expiring every token behind the client's back);
 *   (c) the first call after a three-hour laptop sleep (with and without wake()).
 * Run: npm exec -- node bench/tokens.ts   (prints JSON, then a readable table)
 */
import { concurrentAtExpiry, longRun, sleepThenCall } from '../rigs/token-scenarios.ts';

const hours = Number(process.env.HOURS ?? 48);
const results = {
  longRun: await longRun(hours),
  concurrentWallExpiry: await concurrentAtExpiry(100, 'wall'),
  concurrentServerExpiry: await concurrentAtExpiry(100, 'server'),
  sleepThreeHoursWithWake: await sleepThenCall(3, true),
  sleepThreeHoursNoWake: await sleepThenCall(3, false),
};

console.log(JSON.stringify(results, null, 2));

const a = results.longRun;
const rows: Array<[string, string | number]> = [
  [`(a) ${a.simulatedHours} h, 1 call/min: calls`, a.calls],
  ['(a) succeeded', a.succeeded],
  ['(a) failed for an expired token', a.failedExpired],
  ['(a) failed otherwise', a.failedOther],
  ['(a) 10002 answers from the service', a.tokenExpiredRejections],
  ['(a) get_token requests', a.getToken],
  ['(a) refresh_token requests', a.refreshToken],
  ['(a) real time (ms)', a.realMs],
];
for (const [name, r] of [
  ['(b) wall clock at expiry', results.concurrentWallExpiry],
  ['(b) service expired all tokens', results.concurrentServerExpiry],
] as const) {
  rows.push([`${name}: callers / succeeded`, `${r.callers} / ${r.succeeded}`]);
  rows.push([`${name}: refreshes issued`, r.refreshes]);
  rows.push([`${name}: get_token issued`, r.getTokens]);
  rows.push([`${name}: 10002 inside calls (retried)`, r.expiredSeenByFn]);
}
for (const [name, r] of [
  ['(c) 3 h sleep, wake()', results.sleepThreeHoursWithWake],
  ['(c) 3 h sleep, no wake()', results.sleepThreeHoursNoWake],
] as const) {
  rows.push([`${name}: first call succeeded`, String(r.firstCallSucceeded)]);
  rows.push([
    `${name}: 10002 seen by caller / inside call`,
    `${r.expiredSeenByCaller} / ${r.expiredSeenByFn}`,
  ]);
  rows.push([`${name}: refreshes`, r.refreshes]);
}
const width = Math.max(...rows.map(([k]) => k.length));
console.log('');
for (const [k, v] of rows) console.log(`${k.padEnd(width)}  ${v}`);
