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
import { jsonLine } from './json-text.ts';
import { MIN_SECRET_LENGTH, secretForms } from './secret-forms.ts';
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

/**
 * A deep copy of `value` for the outside world: `text` applied to every string, fields with a
 * secret-looking name masked (or dropped), anything nested deeper than MAX_REDACT_DEPTH left out.
 */
export function redactTree(
  value: unknown,
  text: (s: string) => string,
  secretField: 'mask' | 'drop',
  depth = 0,
): unknown {
  if (typeof value === 'string') return text(value);
  if (value instanceof Error) return { name: value.name, message: text(value.message) };
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
    const out = pattern ? text.replace(pattern, REDACTED) : text;
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
  /** Where finished, redacted records go. Default: one JSON line each on stderr. */
  sink?: (record: LogRecord) => void;
  level?: LogLevel;
  secrets?: SecretRegistry;
  now?: () => number;
}

export function createLogger(options: LoggerOptions = {}, bindings: LogFields = {}): Logger {
  const sink = options.sink ?? ((r: LogRecord) => process.stderr.write(jsonLine(r)));
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

/** A logger that keeps records in memory, redacted like the real one; for tests that assert on logs. */
export function memoryLogger(secrets = new SecretRegistry()): Logger & { records: LogRecord[] } {
  const records: LogRecord[] = [];
  const logger = createLogger({ sink: (r) => records.push(r), level: 'debug', secrets });
  return Object.assign(logger, { records });
}
