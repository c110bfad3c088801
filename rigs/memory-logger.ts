import {
  createLogger,
  SecretRegistry,
  type Logger,
  type LogRecord,
} from '../src-shared/process/log.ts';

/** A logger that keeps records in memory, redacted like the real one; for tests that assert on logs. */
export function memoryLogger(secrets = new SecretRegistry()): Logger & { records: LogRecord[] } {
  const records: LogRecord[] = [];
  const logger = createLogger({ sink: (r) => records.push(r), level: 'debug', secrets });
  return Object.assign(logger, { records });
}
