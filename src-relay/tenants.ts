import { TENANT_PATTERN } from '../src-shared/relay/relay-protocol.ts';
import type { TenantConfig } from './config.ts';

export interface ResolvedTenant {
  name: string;
  config: TenantConfig;
}

/**
 * The configured tenant a path names: `/webhook/<tenant>`, `/v1/stream/<tenant>`, `/v1/enrol/<tenant>`
 * or `/v1/org/<tenant>` (`prefix` is
 * the part before the name). The one tenant lookup of the relay: the name is URL-decoded, must
 * match TENANT_PATTERN and be a configured tenant (an own property, so `__proto__` or
 * `constructor` name nothing). Null for any other path or name.
 */
export function tenantInPath(
  tenants: Readonly<Record<string, TenantConfig>>,
  path: string,
  prefix: '/webhook/' | '/v1/stream/' | '/v1/enrol/' | '/v1/org/' | '/v1/claim/',
): ResolvedTenant | null | 'no-match' {
  if (!path.startsWith(prefix)) return 'no-match';
  const segment = path.slice(prefix.length);
  if (segment === '' || segment.includes('/')) return 'no-match';
  let name: string;
  try {
    name = decodeURIComponent(segment);
  } catch {
    return null;
  }
  if (!TENANT_PATTERN.test(name) || !Object.hasOwn(tenants, name)) return null;
  return { name, config: tenants[name]! };
}

/** The path of a request without its query. */
export function pathOf(url: string | undefined): string {
  const raw = url ?? '/';
  const q = raw.indexOf('?');
  return q < 0 ? raw : raw.slice(0, q);
}
