/**
 * The main process's log: JSON lines in <userData>/logs/screenpop.log (and stderr when not
 * packaged), every line redacted through the shared SecretRegistry before it is written.
 */
import { createWriteStream, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createLogger, type Logger, type LogRecord, type SecretRegistry } from '../core/log.ts';

export function createAppLogger(
  logDir: string,
  secrets: SecretRegistry,
  toStderr: boolean,
): Logger {
  let write: (line: string) => void = () => {};
  try {
    mkdirSync(logDir, { recursive: true, mode: 0o700 });
    const stream = createWriteStream(join(logDir, 'screenpop.log'), { flags: 'a', mode: 0o600 });
    stream.on('error', () => {
      write = () => {};
    });
    write = (line) => stream.write(line);
  } catch {
    /* no log file: stderr only */
  }
  const sink = (record: LogRecord) => {
    const line = JSON.stringify(record) + '\n';
    write(line);
    if (toStderr) process.stderr.write(line);
  };
  return createLogger({
    sink,
    secrets,
    level: process.env.SCREENPOP_LOG_LEVEL === 'debug' ? 'debug' : 'info',
  });
}
