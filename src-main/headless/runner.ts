/**
 * The headless runner: the same ScreenpopEngine the tray app uses, with pops, dismisses and status
 * changes printed as JSON lines instead of shown. Used for servers, kiosks, scripts and black-box
 * tests. `--demo` starts the simulator in-process and rings the user's extension every few seconds.
 */
import { systemClock, type Clock } from '../core/clock.ts';
import { ServiceClient } from '../core/api/service-client.ts';
import { TokenManager, type Credentials } from '../core/api/token-manager.ts';
import { keychainAccount } from '../core/credentials/credential-store.ts';
import { KeytarCredentialStore } from '../core/credentials/keytar-store.ts';
import { ScreenpopEngine } from '../core/engine.ts';
import type { ConnectionStatus } from '../core/events/contracts.ts';
import type { Logger, SecretRegistry } from '../core/log.ts';
import type { HeadlessArgs } from './args.ts';
import { CallerDirectory } from './caller-names.ts';
import type { DemoService } from '../core/app/ports.ts';
import { dismissLine, formatLine, popLine, statusLine, type OutputLine } from './output.ts';

export const EXIT = { ok: 0, failure: 1, usage: 2, needsAttention: 3 } as const;

export interface RunnerDeps {
  args: HeadlessArgs;
  env: Record<string, string | undefined>;
  write: (text: string) => void;
  logger: Logger;
  secrets: SecretRegistry;
  /** Resolves when the runner should stop (SIGINT/SIGTERM). */
  stopSignal: Promise<void>;
  clock?: Clock;
}

export async function runHeadless(deps: RunnerDeps): Promise<number> {
  const { args, logger, secrets } = deps;
  const clock = deps.clock ?? systemClock;
  let demo: DemoService | undefined;
  let baseUrl = args.baseUrl;
  let credentials: () => Promise<Credentials | null>;
  if (args.demo) {
    // Loaded only for --demo: the simulator is not part of a normal run. The same demo as the
    // tray app's, ringing every 5 s.
    const { startDemo } = await import('../../src-sim/demo.ts');
    demo = await startDemo({
      clock,
      logger,
      extension: args.extensions[0] ?? '101',
      ringEverySec: 5,
    });
    baseUrl = demo.baseUrl;
    const { apiKey: key, secret } = demo;
    secrets.add(secret);
    credentials = async () => ({ key, secret });
  } else {
    credentials = credentialsFromEnvOrKeychain(deps.env, baseUrl, secrets);
  }

  const client = new ServiceClient({ baseUrl, clock, logger, secrets });
  const tokens = new TokenManager({ client, credentials, clock, logger, secrets });
  const engine = new ScreenpopEngine({
    baseUrl,
    tokens,
    clock,
    logger,
    mode: 'direct',
    user: { extensions: args.extensions, dids: args.dids, defaultRegion: args.region },
    staleRingMs: args.staleRingSec * 1000,
    heartbeatMs: args.heartbeatSec * 1000,
  });
  const directory = new CallerDirectory({
    load: () => tokens.call((token) => client.listExtensions(token)),
    clock,
    logger,
  });

  // Lines go out in the order things happened, even when a pop waits for the first extension list.
  let queue = Promise.resolve();
  const emit = (line: OutputLine | Promise<OutputLine>) => {
    queue = queue.then(async () => deps.write(formatLine(await line)));
  };
  let attention: ((s: ConnectionStatus) => void) | undefined;
  const needsAttention = new Promise<ConnectionStatus>((resolve) => (attention = resolve));
  const offStatus = engine.onStatus((s) => {
    emit(statusLine(s));
    if (s.state === 'needs-attention') attention?.(s);
  });
  engine.onPop((p) => emit(directory.nameFor(p.from).then((name) => popLine(p, name))));
  engine.onDismiss((d) => emit(dismissLine(d)));

  directory.start();
  engine.start();
  const outcome = await Promise.race([
    deps.stopSignal.then(() => 'stop' as const),
    needsAttention.then(() => 'attention' as const),
  ]);
  logger.info(outcome === 'stop' ? 'stopping' : 'needs attention; stopping');
  // The last status line stays the one that explains the exit (no "stopped" line after it).
  offStatus();
  directory.stop();
  await engine.stop();
  tokens.stop();
  await demo?.close();
  await queue;
  return outcome === 'stop' ? EXIT.ok : EXIT.needsAttention;
}

/** SCREENPOP_API_KEY + SCREENPOP_API_SECRET, or the key from the environment and the secret from the keychain. */
function credentialsFromEnvOrKeychain(
  env: Record<string, string | undefined>,
  baseUrl: string,
  secrets: SecretRegistry,
): () => Promise<Credentials | null> {
  const key = env.SCREENPOP_API_KEY?.trim() ?? '';
  const envSecret = env.SCREENPOP_API_SECRET ?? '';
  secrets.add(envSecret);
  if (!key) return async () => null;
  if (envSecret) return async () => ({ key, secret: envSecret });
  const store = new KeytarCredentialStore();
  const account = keychainAccount(key, baseUrl);
  return async () => {
    const secret = await store.getSecret(account);
    secrets.add(secret);
    return secret ? { key, secret } : null;
  };
}
