/**
 * The main process's log: JSON lines in <userData>/logs/screenpop.log, rotated at 5 MB (and stderr
 * when not packaged), every line redacted through the shared SecretRegistry before it is written.
 */
import { join } from 'node:path';
import type { LogRing } from '../core/diagnostics/bounded-log.ts';
import {
  createLogger,
  type Logger,
  type LogRecord,
  type SecretRegistry,
} from '../../src-shared/process/log.ts';
import { rotatingFileSink } from '../core/rotating-file.ts';
import { jsonLine } from '../../src-shared/files/json-text.ts';
import { stderrOutput } from '../../src-shared/process/output-stream.ts';

export function createAppLogger(
  logDir: string,
  secrets: SecretRegistry,
  toStderr: boolean,
  /** Keeps the last lines in memory for "Save diagnostics…". */
  ring?: LogRing,
): Logger {
  // At most ~10 MB on disk (screenpop.log + screenpop.log.1); on any file error, stderr only.
  const write = rotatingFileSink(join(logDir, 'screenpop.log'));
  const toFile = (record: LogRecord) => {
    const line = jsonLine(record);
    write(line);
    // Through its one writer: a terminal closed under `npm start` is no write error in a loop.
    if (toStderr) stderrOutput().write(line);
  };
  return createLogger({
    sink: ring ? ring.tee(toFile) : toFile,
    secrets,
    level: process.env.SCREENPOP_LOG_LEVEL === 'debug' ? 'debug' : 'info',
  });
}
