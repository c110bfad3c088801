/**
 * Gateway mode's credential (config.ts `tenants.<name>.gateway`): the phone system's API key and
 * secret, read once at start from a file or an environment variable, never from the JSON config.
 * Failures are StartupErrors naming the setting and what to do; nothing here quotes a value.
 */
import { readFileSync, statSync } from 'node:fs';
import type { GatewayConfig } from '../config.ts';
import { fileStartupError, StartupError } from '../startup-errors.ts';

export interface GatewayCredential {
  apiKey: string;
  secret: string;
}

type Part = 'apiKey' | 'secret';

/** Where a part comes from, in words (no value): for --check-config and errors. */
export function sourceOf(tenant: string, gateway: GatewayConfig, part: Part): string {
  const file = part === 'apiKey' ? gateway.apiKeyFile : gateway.secretFile;
  const env = part === 'apiKey' ? gateway.apiKeyEnv : gateway.secretEnv;
  return file !== undefined
    ? `tenants.${tenant}.gateway.${part}File ${file}`
    : `the environment variable ${env} (tenants.${tenant}.gateway.${part}Env)`;
}

function readPart(
  tenant: string,
  gateway: GatewayConfig,
  part: Part,
  env: NodeJS.ProcessEnv,
): string {
  const file = part === 'apiKey' ? gateway.apiKeyFile : gateway.secretFile;
  const name = part === 'apiKey' ? gateway.apiKeyEnv : gateway.secretEnv;
  const what = part === 'apiKey' ? 'API key (Client ID)' : 'API secret (Client Secret)';
  let value: string;
  if (file !== undefined) {
    try {
      value = readFileSync(file, 'utf8');
    } catch (err) {
      throw fileStartupError(`tenants.${tenant}.gateway.${part}File`, file, err);
    }
  } else value = env[name!] ?? '';
  // A file written by an editor or `echo` ends with a newline; the value itself never does.
  value = value.replace(/\r?\n$/, '');
  if (value.trim() === '')
    throw new StartupError(
      `tenants.${tenant}.gateway: the phone system's ${what} is missing: ${sourceOf(tenant, gateway, part)} is ${file !== undefined ? 'empty' : 'not set'}. Put the ${what} from the phone system's API settings there.`,
    );
  return value;
}

/** Reads the tenant's key and secret; throws a StartupError naming what is missing. */
export function readGatewayCredential(
  tenant: string,
  gateway: GatewayConfig,
  env: NodeJS.ProcessEnv,
): GatewayCredential {
  return {
    apiKey: readPart(tenant, gateway, 'apiKey', env),
    secret: readPart(tenant, gateway, 'secret', env),
  };
}

/** A secret file that others than its owner may read (warned about by --check-config). */
export function readableByOthers(file: string): boolean {
  try {
    return (statSync(file).mode & 0o077) !== 0;
  } catch {
    return false;
  }
}
