/// <reference types="node" />
// Node's globals are used here; the renderer's type check (tsconfig.web.json) reaches this file
// through log.ts, so it names them itself.
/**
 * The process's standard streams, written so that a reader that goes away cannot take the process
 * with it. Node ignores SIGPIPE: a write to a pipe whose reader has exited (`... | head -1`, a
 * consumer that crashed, a log collector that died) fails with EPIPE, emitted as an 'error' event
 * on process.stdout / process.stderr. Without a listener that is an uncaught exception; the last
 * resort catches it and logs it to stderr, and since Node "undestroys" these two streams after
 * every error, each later write fails again: a write, an error, a log line, a write, ... in
 * process.nextTick, so fast that no timer, socket or signal handler runs again (measured before
 * this file: 93 MB of stderr in 10 s, a full core, SIGTERM ignored).
 *
 * `outputStream(stream)` is the one writer of such a stream: it listens for its errors, and from
 * the first one on it drops every write and says once that the stream is gone (`gone`). What that
 * means is the owner's decision: stderr gone is "carry on without logs"; the runner's stdout gone
 * is "the consumer is gone: stop". A reader that stopped reading leaves the bytes in memory
 * (Node queues what the pipe does not take): past `maxBacklogBytes` unread, `backlog` says what
 * happens: `gone` (stdout: those lines are the product, and a reader that far behind is gone) or
 * `drop` (stderr: lines are dropped while the backlog lasts, and written again once the reader
 * has caught up).
 *
 * One writer per stream object (a second listener per logger would pile up): the first call for a
 * stream makes it, later calls return the same one.
 */

/** What this needs of process.stdout / process.stderr (tests pass a stand-in). */
export interface WritableOutput {
  write(text: string): boolean;
  on(event: 'error', listener: (error: Error) => void): unknown;
  /** Bytes written but not yet taken by the reader (Node's Writable). */
  readonly writableLength: number;
}

/** Why a stream is gone: the write error's code (EPIPE, ...), or `backlog` for a reader that stopped reading. */
export interface OutputGone {
  code: string;
}

export interface OutputStream {
  /** Writes `text`, or drops it once the stream is gone. Never throws. */
  write(text: string): void;
  /** Whether writes are dropped now. */
  isGone(): boolean;
  /** Resolves once, at the first write error (or a backlog past the bound). */
  readonly gone: Promise<OutputGone>;
}

/**
 * Unread bytes after which the reader is taken as gone: far more than any reader that is reading
 * leaves behind (a runner writes a few hundred bytes an event), far less than would matter in memory.
 */
export const MAX_BACKLOG_BYTES = 4 * 1024 * 1024;

const writers = new WeakMap<WritableOutput, OutputStream>();

export function outputStream(
  stream: WritableOutput,
  options: { maxBacklogBytes?: number; backlog?: 'gone' | 'drop' } = {},
): OutputStream {
  const existing = writers.get(stream);
  if (existing) return existing;
  const maxBacklog = options.maxBacklogBytes ?? MAX_BACKLOG_BYTES;
  const dropOnBacklog = options.backlog === 'drop';
  let gone: OutputGone | undefined;
  let settle: (why: OutputGone) => void = () => {};
  const promise = new Promise<OutputGone>((resolve) => (settle = resolve));
  const end = (error: unknown, fallback: string): void => {
    if (gone) return;
    const code = (error as { code?: unknown } | null)?.code;
    gone = { code: typeof code === 'string' && code ? code : fallback };
    settle(gone);
  };
  // Every later error of a gone stream lands here too, and goes no further.
  stream.on('error', (error) => end(error, 'error'));
  const writer: OutputStream = {
    write(text) {
      if (gone) return;
      if (dropOnBacklog && stream.writableLength > maxBacklog) return;
      try {
        stream.write(text);
      } catch (error) {
        end(error, 'error');
        return;
      }
      if (!dropOnBacklog && stream.writableLength > maxBacklog) end(null, 'backlog');
    },
    isGone: () => gone !== undefined,
    gone: promise,
  };
  writers.set(stream, writer);
  return writer;
}

/**
 * The process's stderr, through its one writer: what log lines and a program's messages go to.
 * A reader that stopped reading costs the lines written meanwhile, never memory.
 */
export function stderrOutput(): OutputStream {
  return outputStream(process.stderr, { backlog: 'drop' });
}

/** The process's stdout, through its one writer: a reader that stopped reading is gone. */
export function stdoutOutput(): OutputStream {
  return outputStream(process.stdout, { backlog: 'gone' });
}
