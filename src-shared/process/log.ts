/// <reference types="node" />
// Node's globals are used here; the renderer's type check (tsconfig.web.json, without Node's
// types) reaches this file through the core's types, so it names them itself.
/**
 * Structured logging with redaction. Secrets (API secret, access and refresh tokens, webhook
 * secrets) are registered with a SecretRegistry as soon as they are known; every log line, and every
 * error message built through `redact`, has their occurrences replaced. Fields whose names look
 * like secrets (isSecretName) are masked whatever their value; values nested deeper than
 * MAX_REDACT_DEPTH are left out, never passed on unchecked.
 */
import { jsonLine } from '../files/json-text.ts';
import { MIN_SECRET_LENGTH, secretForms } from './secret-forms.ts';
import { stderrOutput } from './output-stream.ts';
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  /** A logger that adds `bindings` to every line (e.g. `{ component: 'token-manager' }`). */
  child(bindings: LogFields): Logger;
}

export const REDACTED = '[REDACTED]';

/**
 * A field name that looks like it carries a secret: it contains secret, password (passwd),
 * passphrase, token, credential, private key, authorization or signature, in any case. The one
 * rule for the log, the diagnostics archive and settings files (validate-settings.ts), so that no
 * one of them keeps what another removes. An API key alone (`apiKey`) is not a secret.
 */
const SECRET_NAME =
  /secret|passw(or)?d|passphrase|token|credential|private.?key|authorization|signature/i;

export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

/** Objects and lists nested deeper than this are left out of a redacted copy (TOO_DEEP). */
export const MAX_REDACT_DEPTH = 8;
export const TOO_DEEP = '[left out: nested too deep]';

/** How many causes of an error are kept (its cause, the cause's cause, ...); deeper: TOO_DEEP. */
export const MAX_CAUSE_DEPTH = 4;
/** Lines of an error's stack kept (its first line and the innermost frames). */
export const MAX_STACK_LINES = 24;

/**
 * What support needs of an error, each string through `text` (the scrubber): its name, message,
 * `code` (ECONNRESET, a service errcode), its stack cut to MAX_STACK_LINES and its `cause` chain
 * MAX_CAUSE_DEPTH deep. A secret inside a cause or a stack goes through the same scrubber as the
 * message (a stack's first line repeats the message), so it never reaches the log.
 */
function errorRecord(
  err: Error,
  text: (s: string) => string,
  secretField: 'mask' | 'drop',
  causes: number,
): Record<string, unknown> {
  const out: Record<string, unknown> = { name: err.name, message: text(err.message) };
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') out.code = text(code);
  else if (typeof code === 'number') out.code = code;
  if (typeof err.stack === 'string')
    out.stack = text(err.stack.split('\n').slice(0, MAX_STACK_LINES).join('\n'));
  const cause: unknown = err.cause;
  if (cause !== undefined)
    out.cause =
      causes >= MAX_CAUSE_DEPTH
        ? TOO_DEEP
        : cause instanceof Error
          ? errorRecord(cause, text, secretField, causes + 1)
          : redactTree(cause, text, secretField, MAX_REDACT_DEPTH - 2);
  return out;
}

/**
 * A deep copy of `value` for the outside world: `text` applied to every string, fields with a
 * secret-looking name masked (or dropped), anything nested deeper than MAX_REDACT_DEPTH left out,
 * errors as errorRecord keeps them.
 */
export function redactTree(
  value: unknown,
  text: (s: string) => string,
  secretField: 'mask' | 'drop',
  depth = 0,
): unknown {
  if (typeof value === 'string') return text(value);
  if (value instanceof Error) return errorRecord(value, text, secretField, 0);
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_REDACT_DEPTH) return TOO_DEEP;
  if (Array.isArray(value)) return value.map((v) => redactTree(v, text, secretField, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (!isSecretName(k)) out[k] = redactTree(v, text, secretField, depth + 1);
    else if (secretField === 'mask') out[k] = REDACTED;
  }
  return out;
}

/**
 * Known secret values, so that they can be scrubbed from any text: each in every form it can be
 * written (secret-forms.ts: percent-encoded, JSON-escaped, base64), in any letter case. Shorter
 * than 6 chars are ignored.
 */
export class SecretRegistry {
  private readonly secrets = new Map<string, string[]>();
  /** Every form of every secret as one pattern, longest first; rebuilt after a change. */
  private pattern: RegExp | null | undefined;
  /** The user's home folder in the forms a path takes in text, each written as `~`. */
  private home: RegExp | null = null;

  /**
   * Writes `home` (the user's home folder, os.homedir()) as `~` wherever it appears, as the log
   * and the diagnostics archive need it: stacks and file names otherwise carry the user's account
   * name. Its forms: as is, with / for \ (a file: URL), with \\ (JSON), percent-encoded.
   */
  hideHome(home: string | undefined): this {
    const trimmed = home?.replace(/[\\/]+$/, '');
    if (!trimmed || trimmed.length < 2) return this;
    const forms = new Set([
      trimmed,
      trimmed.replace(/\\/g, '/'),
      trimmed.replace(/\\/g, '\\\\'),
      encodeURI(trimmed.replace(/\\/g, '/')),
    ]);
    const escaped = [...forms]
      .sort((a, b) => b.length - a.length)
      .map((f) => f.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    // Not when it is only the start of a longer name (/home/al in /home/alice).
    this.home = new RegExp(`(?:${escaped.join('|')})(?![\\p{L}\\p{N}_.-])`, 'giu');
    return this;
  }

  add(secret: string | undefined | null): void {
    if (!secret || secret.length < MIN_SECRET_LENGTH || this.secrets.has(secret)) return;
    this.secrets.set(secret, secretForms(secret));
    this.pattern = undefined;
  }

  remove(secret: string | undefined | null): void {
    if (secret && this.secrets.delete(secret)) this.pattern = undefined;
  }

  /**
   * Replaces every registered secret, and anything that looks like a credential, in `text`: a
   * bearer token, and the value of a token, secret or password query parameter (phone systems
   * such as Yeastar's carry the access token in the URL: docs/phone-systems/yeastar-p-series.md).
   */
  scrub(text: string): string {
    const pattern = this.compiled();
    let out = pattern ? text.replace(pattern, REDACTED) : text;
    if (this.home) out = out.replace(this.home, '~');
    return out
      .replace(/(Bearer\s+)[A-Za-z0-9._~+/=-]+/gi, `$1${REDACTED}`)
      .replace(
        /([?&](?:access_token|token|refresh_token|secret|client_secret|password)=)[^&\s"']+/gi,
        `$1${REDACTED}`,
      );
  }

  private compiled(): RegExp | null {
    if (this.pattern !== undefined) return this.pattern;
    const forms = [...new Set([...this.secrets.values()].flat())].sort(
      (a, b) => b.length - a.length,
    );
    this.pattern = forms.length
      ? new RegExp(forms.map((f) => f.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'gi')
      : null;
    return this.pattern;
  }

  /** Deep copy of `value` with secret fields masked and registered secrets scrubbed from strings. */
  redact(value: unknown): unknown {
    return redactTree(value, (s) => this.scrub(s), 'mask');
  }
}

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface LogRecord {
  time: string;
  level: LogLevel;
  msg: string;
  [field: string]: unknown;
}

export interface LoggerOptions {
  /**
   * Where finished, redacted records go. Default: one JSON line each on stderr, through its one
   * writer (output-stream.ts): a stderr nobody reads any more is written no more, never a loop.
   */
  sink?: (record: LogRecord) => void;
  level?: LogLevel;
  secrets?: SecretRegistry;
  now?: () => number;
}

export function createLogger(options: LoggerOptions = {}, bindings: LogFields = {}): Logger {
  const sink = options.sink ?? ((r: LogRecord) => stderrOutput().write(jsonLine(r)));
  const min = ORDER[options.level ?? 'info'];
  const secrets = options.secrets ?? new SecretRegistry();
  const now = options.now ?? Date.now;
  const write = (level: LogLevel, msg: string, fields?: LogFields) => {
    if (ORDER[level] < min) return;
    const extra = secrets.redact({ ...bindings, ...fields }) as LogFields;
    sink({ time: new Date(now()).toISOString(), level, msg: secrets.scrub(msg), ...extra });
  };
  return {
    debug: (m, f) => write('debug', m, f),
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
    child: (more) => createLogger(options, { ...bindings, ...more }),
  };
}

/** A logger that drops everything (for tests that do not look at logs). */
export const silentLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  child() {
    return silentLogger;
  },
};
