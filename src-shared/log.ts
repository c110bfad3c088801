/**
 * Structured logging with redaction. Secrets (API secret, access and refresh tokens, webhook
 * secrets) are registered with a SecretRegistry as soon as they are known; every log line, and every
 * error message built through `redact`, has their occurrences replaced. Field names that always
 * carry secrets are masked whatever their value.
 */
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

const SECRET_FIELD =
  /^(password|secret|api_?secret|access_?token|refresh_?token|token|authorization|signature|x-service-signature|webhook_?secret)$/i;

/** Known secret values, so that they can be scrubbed from any text. Shorter than 6 chars are ignored. */
export class SecretRegistry {
  private readonly secrets = new Set<string>();

  add(secret: string | undefined | null): void {
    if (secret && secret.length >= 6) this.secrets.add(secret);
  }

  remove(secret: string | undefined | null): void {
    if (secret) this.secrets.delete(secret);
  }

  /**
   * Replaces every registered secret, and anything that looks like a credential, in `text`: a
   * bearer token, and the value of a token, secret or password query parameter (phone systems
   * such as Yeastar's carry the access token in the URL: docs/phone-systems/yeastar-p-series.md).
   */
  scrub(text: string): string {
    let out = text;
    for (const s of this.secrets) if (out.includes(s)) out = out.split(s).join(REDACTED);
    return out
      .replace(/(Bearer\s+)[A-Za-z0-9._~+/=-]+/gi, `$1${REDACTED}`)
      .replace(
        /([?&](?:access_token|token|refresh_token|secret|client_secret|password)=)[^&\s"']+/gi,
        `$1${REDACTED}`,
      );
  }

  /** Deep copy of `value` with secret fields masked and registered secrets scrubbed from strings. */
  redact(value: unknown, depth = 0): unknown {
    if (typeof value === 'string') return this.scrub(value);
    if (value instanceof Error) return { name: value.name, message: this.scrub(value.message) };
    if (value === null || typeof value !== 'object' || depth > 6) return value;
    if (Array.isArray(value)) return value.map((v) => this.redact(v, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value))
      out[k] = SECRET_FIELD.test(k) ? REDACTED : this.redact(v, depth + 1);
    return out;
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
  const sink = options.sink ?? ((r: LogRecord) => process.stderr.write(JSON.stringify(r) + '\n'));
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
