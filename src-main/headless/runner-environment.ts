/**
 * What the runner takes from its environment, read once at its entry (cli.ts) before anything is
 * composed, as the tray app's launchEnvironment does: the run itself (runner.ts) takes values.
 */
export interface RunnerEnvironment {
  /** SCREENPOP_API_KEY, trimmed ('' when unset): the key when no flag nor policy gives one. */
  apiKey: string;
  /** SCREENPOP_API_SECRET ('' when unset): the secret kept in memory instead of the keychain's. */
  apiSecret: string;
  /** SCREENPOP_CRM_TOKEN, trimmed ('' when unset): the CRM token, before the keychain's. */
  crmToken: string;
  /**
   * The generic connector's call-log signing secret: SCREENPOP_CRM_LOG_SECRET ('' when unset), or
   * what cli.ts read from --crm-log-secret-file (which wins); before the keychain's.
   */
  crmLogSecret: string;
  /** The system's proxy, for the transport: HTTPS_PROXY, HTTP_PROXY, ALL_PROXY, NO_PROXY (either case). */
  proxyVariables: Record<string, string | undefined>;
  /** XDG_RUNTIME_DIR ('' when unset): the user's own folder, where the control socket is (dial). */
  runtimeDir: string;
}

const PROXY_VARIABLES = ['HTTPS_PROXY', 'HTTP_PROXY', 'ALL_PROXY', 'NO_PROXY'];

export function runnerEnvironment(env: Record<string, string | undefined>): RunnerEnvironment {
  const proxyVariables: Record<string, string | undefined> = {};
  for (const name of PROXY_VARIABLES)
    for (const spelled of [name, name.toLowerCase()])
      if (env[spelled] !== undefined) proxyVariables[spelled] = env[spelled];
  return {
    apiKey: env.SCREENPOP_API_KEY?.trim() ?? '',
    apiSecret: env.SCREENPOP_API_SECRET ?? '',
    crmToken: env.SCREENPOP_CRM_TOKEN?.trim() ?? '',
    crmLogSecret: env.SCREENPOP_CRM_LOG_SECRET?.trim() ?? '',
    proxyVariables,
    runtimeDir: env.XDG_RUNTIME_DIR ?? '',
  };
}
