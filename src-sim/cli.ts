/**
 * `npm run sim`: the service simulator as a standalone server. Prints, on stdout, the base URL and
 * the API key and secret it created (a simulator's credentials are meant to be copied into the app).
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { joinNegativeNumbers, valueOptionsOf } from '../src-shared/process/cli-args.ts';
import { listenFailure } from '../src-shared/net/listen-error.ts';
import { whenToStop } from '../src-shared/process/stop-signal.ts';
import { startSimulator } from './simulator.ts';
import type { SimulatorOptions } from './types.ts';
import { API_PATHS, serviceUrl } from '../src-shared/api/service-api.ts';
import packageJson from '../package.json' with { type: 'json' };
import { stdoutOutput } from '../src-shared/process/output-stream.ts';
import { isPhoneSystem, phoneSystemsJoined } from '../src-shared/phone-systems/names.ts';

const USAGE = `Usage: npm run sim -- [options]
  --port <n>             listen port (default 0: a free port)
  --host <addr>          listen address (default 127.0.0.1)
  --tenant <id>          tenant identifier (default acme)
  --seed <n>             seeds keys, names and traffic (default 1)
  --clock-speed <x>      simulated time runs x times faster (default 1)
  --extensions <n>       number of extensions, from 101 (default 20)
  --timestamp-unit <u>   ms (default) or s
  --traffic <events/s>   start background call traffic at this rate
  --exclude <list>       extensions the traffic never rings, comma-separated
  --idle-timeout <ms>    close silent sockets after this many real ms (default 60000)
  --tls-cert <file>      serve https/wss with this PEM certificate (and --tls-key)
  --tls-key <file>       the certificate's PEM private key
  --phone-system <s>     standard (default) or yeastar-p-series
  --report-style <s>     yeastar-p-series call reports: member (default: the members that
                         changed, the caller beside each ring, as real PBXs were captured
                         sending them), snapshot (every member in each report) or mixed (each
                         call one of the two, from the seed)
  --token-lifetime <s>   access token lifetime in seconds (default 1800)
  --token-limit <n>      refuse a token past n valid ones per API application (Yeastar: 8)
  --token-one-sign-in    each get_token ends the API application's earlier tokens
  --control              enable the HTTP control surface under /_sim/
  --version              print the version and exit
  --help`;

const OPTIONS = {
  port: { type: 'string' },
  host: { type: 'string' },
  tenant: { type: 'string' },
  seed: { type: 'string' },
  'clock-speed': { type: 'string' },
  extensions: { type: 'string' },
  'timestamp-unit': { type: 'string' },
  traffic: { type: 'string' },
  exclude: { type: 'string' },
  'idle-timeout': { type: 'string' },
  'tls-cert': { type: 'string' },
  'tls-key': { type: 'string' },
  'phone-system': { type: 'string' },
  'report-style': { type: 'string' },
  'token-lifetime': { type: 'string' },
  'token-limit': { type: 'string' },
  'token-one-sign-in': { type: 'boolean' },
  control: { type: 'boolean' },
  version: { type: 'boolean' },
  help: { type: 'boolean' },
} as const;

function fail(message: string): never {
  process.stderr.write(`${message}\n\n${USAGE}\n`);
  process.exit(2);
}

function number(
  value: string | undefined,
  name: string,
  check: (n: number) => boolean,
): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || !check(n)) fail(`invalid --${name}: ${value}`);
  return n;
}

let parsed;
try {
  parsed = parseArgs({
    // A negative number is a value to check, not a flag (parseArgs: "argument is ambiguous").
    args: joinNegativeNumbers(process.argv.slice(2), valueOptionsOf(OPTIONS)),
    options: OPTIONS,
    strict: true,
  }).values;
} catch (err) {
  fail((err as Error).message);
}
if (parsed.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
if (parsed.version) {
  stdoutOutput().write(`screenpop-sim ${packageJson.version}\n`);
  process.exit(0);
}

const unit = parsed['timestamp-unit'];
if (unit !== undefined && unit !== 'ms' && unit !== 's') fail(`invalid --timestamp-unit: ${unit}`);
const phoneSystem = parsed['phone-system'];
if (phoneSystem !== undefined && !isPhoneSystem(phoneSystem))
  fail(`invalid --phone-system: ${phoneSystem} (${phoneSystemsJoined(' or ')})`);
const reportStyle = parsed['report-style'];
if (
  reportStyle !== undefined &&
  reportStyle !== 'snapshot' &&
  reportStyle !== 'member' &&
  reportStyle !== 'mixed'
)
  fail(`invalid --report-style: ${reportStyle} (snapshot, member or mixed)`);
if (reportStyle !== undefined && phoneSystem !== 'yeastar-p-series')
  fail('--report-style goes with --phone-system yeastar-p-series');
const tenant = parsed.tenant;
if (tenant !== undefined && !/^[A-Za-z0-9_-]{1,64}$/.test(tenant))
  fail(`invalid --tenant: ${tenant}`);

if (Boolean(parsed['tls-cert']) !== Boolean(parsed['tls-key']))
  fail('--tls-cert and --tls-key go together');
let tls: SimulatorOptions['tls'];
if (parsed['tls-cert'] && parsed['tls-key']) {
  try {
    tls = { cert: readFileSync(parsed['tls-cert']), key: readFileSync(parsed['tls-key']) };
  } catch (err) {
    fail(`cannot read the TLS certificate or key: ${(err as Error).message}`);
  }
}

// --token-limit / --token-one-sign-in (src-sim/credentials.ts: the two readings of many tokens).
const tokenLimit = number(
  parsed['token-limit'],
  'token-limit',
  (n) => Number.isInteger(n) && n >= 1,
);
if (tokenLimit !== undefined && parsed['token-one-sign-in'])
  fail('--token-limit and --token-one-sign-in are two different PBXs: choose one');
const tokenRule: SimulatorOptions['tokenRule'] =
  tokenLimit !== undefined
    ? { kind: 'limit', max: tokenLimit }
    : parsed['token-one-sign-in']
      ? { kind: 'one-sign-in' }
      : { kind: 'none' };

const options: SimulatorOptions = {
  ...(tls && { tls }),
  host: parsed.host ?? '127.0.0.1',
  port: number(parsed.port, 'port', (n) => Number.isInteger(n) && n >= 0 && n <= 65535) ?? 0,
  tenant: tenant ?? 'acme',
  seed: number(parsed.seed, 'seed', Number.isInteger) ?? 1,
  clockSpeed: number(parsed['clock-speed'], 'clock-speed', (n) => n > 0) ?? 1,
  extensions:
    number(parsed.extensions, 'extensions', (n) => Number.isInteger(n) && n >= 0 && n <= 8999) ??
    20,
  timestampUnit: unit ?? 'ms',
  idleTimeoutMs: number(parsed['idle-timeout'], 'idle-timeout', (n) => n > 0) ?? 60_000,
  control: parsed.control ?? false,
  phoneSystem: phoneSystem ?? 'standard',
  ...(reportStyle !== undefined && { reportStyle }),
  accessTokenLifetimeSec:
    number(parsed['token-lifetime'], 'token-lifetime', (n) => Number.isInteger(n) && n >= 4) ??
    1800,
  tokenRule,
};
const trafficRate = number(parsed.traffic, 'traffic', (n) => n > 0 && n <= 100_000);
const exclude = parsed.exclude
  ? parsed.exclude
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)
  : [];

/** A failure to start, in one line (no stack trace): exit 1, as the relay does. */
function cannotStart(message: string): never {
  process.stderr.write(`sim: cannot start: ${message}\n`);
  process.exit(1);
}

// Ctrl+C, SIGTERM, or (under `npm run sim`) npm going away: the shared rule (src-shared/process/stop-signal.ts).
// Listened for before the simulator starts and says it is ready: a stop sent the moment the banner
// is read must not meet Node's default action (killed, port and temp files left behind).
const stopRequested = whenToStop(process);
const sim = await startSimulator(options).catch((err: unknown) => {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && code.startsWith('E'))
    cannotStart(
      listenFailure(options.host ?? '127.0.0.1', options.port ?? 0, err, {
        inUse:
          'Stop that program (another simulator?), or choose another port: --port <n>, or --port 0 for a free one.',
        denied: 'Use a port above 1023 (--port <n>).',
        notHere: 'Give --host one of its addresses (default 127.0.0.1).',
      }),
    );
  cannotStart(err instanceof Error ? err.message : String(err));
});
if (trafficRate !== undefined)
  sim.startTraffic({ ratePerSec: trafficRate, excludeExtensions: exclude });

const first = sim.extensions[0]?.number;
const last = sim.extensions[sim.extensions.length - 1]?.number;
process.stdout.write(
  [
    'Screenpop service simulator',
    `  Phone system: ${sim.phoneSystem}`,
    ...(sim.phoneSystem === 'yeastar-p-series'
      ? [`  Reports:      ${options.reportStyle ?? 'member'}`]
      : []),
    `  Base URL:     ${sim.baseUrl}`,
    `  Subscribe:    ${serviceUrl(sim.baseUrl, API_PATHS.subscribe, { ws: true }).href}`,
    `  Tenant:       ${sim.tenant}`,
    `  API key:      ${sim.apiKey.key}`,
    `  API secret:   ${sim.apiKey.secret}`,
    `  Extensions:   ${sim.extensions.length}${first ? ` (${first}-${last})` : ''}`,
    `  Clock speed:  ${options.clockSpeed}x`,
    `  Control:      ${options.control ? `${sim.baseUrl}/_sim/` : 'off (enable with --control)'}`,
    `  Traffic:      ${trafficRate !== undefined ? `${trafficRate} events/s` : 'off'}`,
    'Press Ctrl+C to stop.',
    '',
  ].join('\n'),
);

const reason = await stopRequested;
process.stderr.write(`sim: stopping (${reason})\n`);
await sim.close();
process.stderr.write('sim: stopped\n');
process.exit(0);
