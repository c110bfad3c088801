/**
 * The app's own transport (net/transport.ts), going direct and trusting the system's CAs (or the
 * CA file given): what tests and benchmarks pass where a service takes `fetch` and `createSocket`.
 * Sources and clients have no default of their own, so a test goes the same way out as the app.
 */
import { readFileSync } from 'node:fs';
import { transportFor } from '../src-main/core/net/network.ts';
import type { NetTransport } from '../src-shared/net/transport.ts';
import { SecretRegistry, silentLogger, type Logger } from '../src-shared/process/log.ts';

export function directTransport(
  options: { caFile?: string; logger?: Logger; secrets?: SecretRegistry } = {},
): NetTransport {
  return transportFor(
    { proxyMode: 'none', proxyUrl: '', caFile: options.caFile ?? '' },
    {
      logger: options.logger ?? silentLogger,
      secrets: options.secrets ?? new SecretRegistry(),
      readFile: (path) => readFileSync(path, 'utf8'),
    },
  );
}
