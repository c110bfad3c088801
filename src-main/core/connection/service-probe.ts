import type { Clock } from '../../../src-shared/process/clock.ts';
import type { Logger, SecretRegistry } from '../../../src-shared/process/log.ts';
import { ServiceClient } from '../../../src-shared/api/service-client.ts';
import { wireFor } from '../../../src-shared/wire/index.ts';
import type { ConnectionProbe, TestConnectionInput } from './test-connection.ts';

/** How long giving back a test's token may take. */
const RELEASE_TIMEOUT_MS = 3_000;

/**
 * The probe Test connection (the settings window) and the runner's diagnostics use: a service
 * client on the draft address, speaking the draft phone system's wire format, through the one
 * transport's fetch (proxy, CAs), its secrets registered with the scrubber.
 */
export function serviceProbe(
  input: TestConnectionInput & { secret: string },
  deps: { clock: Clock; logger: Logger; secrets: SecretRegistry; fetch: typeof fetch },
): ConnectionProbe {
  const client = new ServiceClient({
    baseUrl: input.baseUrl,
    clock: deps.clock,
    logger: deps.logger,
    secrets: deps.secrets,
    fetch: deps.fetch,
    api: wireFor(input.phoneSystem).api,
  });
  return {
    getToken: async () => (await client.getToken(input.apiKey, input.secret)).accessToken,
    listExtensions: (token) => client.listExtensions(token),
    // The test's own token goes back at once (del_token on Yeastar), within a few seconds.
    release: (token) => client.revokeToken(token, RELEASE_TIMEOUT_MS),
  };
}
