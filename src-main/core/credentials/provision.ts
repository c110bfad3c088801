/**
 * Pre-provisioning the API secret (`screenpop-headless --store-secret`, `Screenpop --store-secret`):
 * the secret is read from standard input, never from the command line (where other users of the
 * computer see it in the process list), and stored in the keychain under the account the app and
 * the runner read, so an administrator's script can set a user up before they start the app.
 */
import { keychainAccountOrNull, type CredentialStore } from './credential-store.ts';
import type { SecretRegistry } from '../../../src-shared/process/log.ts';
import type { Settings } from '../settings/types.ts';

/** Reads all of a stream (standard input) as text. */
export async function readAll(
  stream: NodeJS.ReadableStream,
  maxBytes = 64 * 1024,
): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += buf.length;
    if (size > maxBytes) throw new Error(`more than ${maxBytes} bytes on standard input`);
    chunks.push(buf);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The first non-empty line of a stream (a secret file, an enrolment code on standard input),
 * trimmed; or what went wrong: `empty`, or the error's code (ENOENT, EACCES...) or message.
 */
export async function firstLineOf(
  stream: NodeJS.ReadableStream,
  maxBytes: number,
): Promise<{ line: string } | { problem: string }> {
  try {
    const text = await readAll(stream, maxBytes);
    const line =
      text
        .split(/\r?\n/)
        .find((l) => l.trim() !== '')
        ?.trim() ?? '';
    return line ? { line } : { problem: 'empty' };
  } catch (error) {
    return { problem: (error as NodeJS.ErrnoException).code ?? (error as Error).message };
  }
}

/**
 * `--store-secret`: the secret from `input` (one line; the line break at its end is not part of
 * it) into the keychain under the account the app and the runner read ("<api key>@<host>").
 * Returns the account, or throws an Error whose message says what to fix (never the secret).
 */
export async function storeSecret(
  settings: Settings,
  input: string,
  store: CredentialStore,
  secrets: SecretRegistry,
): Promise<string> {
  if (settings.connectionMode === 'organisation')
    throw new Error(
      'the policy sets organisation mode (connectionMode "organisation"): the desktops keep no API secret; users sign in with the organisation instead',
    );
  const account = keychainAccountOrNull(settings.apiKey, settings.baseUrl);
  if (!account)
    throw new Error(
      'the API key and the service address are needed: set SCREENPOP_API_KEY and --base-url, or have the policy set apiKey and baseUrl',
    );
  const secret = input.replace(/\r?\n$/, '');
  if (!secret.trim()) throw new Error('no secret on standard input');
  if (secret.includes('\n')) throw new Error('the secret on standard input must be one line');
  secrets.add(secret);
  await store.setSecret(account, secret);
  return account;
}
