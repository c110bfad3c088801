/**
 * runHeadless (in-process, on a fake clock, with the demo's real sockets) when its output fails:
 * a line whose write throws is one line lost, not every line after it (and not an unhandled
 * rejection per later line, each printed as a fault line: a loop); stdout gone (outputGone) is a
 * clean stop with exit 4.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SecretRegistry } from '../../src-shared/process/log.ts';
import { memoryLogger } from '../../rigs/memory-logger.ts';
import type { OutputGone } from '../../src-shared/process/output-stream.ts';
import { parseHeadlessArgs } from '../../src-main/headless/args.ts';
import { EXIT, runHeadless } from '../../src-main/headless/runner.ts';
import { runnerEnvironment } from '../../src-main/headless/runner-environment.ts';
import { advanceWithRealIo, FakeClock } from '../../rigs/fake-clock.ts';
import { waitFor } from '../../rigs/wait.ts';

const rejections: unknown[] = [];
const onRejection = (reason: unknown) => rejections.push(reason);
process.on('unhandledRejection', onRejection);
afterEach(() => {
  rejections.length = 0;
});

function demo(write: (text: string) => void, outputGone?: Promise<OutputGone>) {
  const clock = new FakeClock();
  const logger = memoryLogger();
  let stop!: () => void;
  const exit = runHeadless({
    args: parseHeadlessArgs(['--demo']),
    environment: runnerEnvironment({}),
    write,
    ...(outputGone ? { outputGone } : {}),
    logger,
    secrets: new SecretRegistry(),
    stopSignal: new Promise<void>((resolve) => (stop = resolve)),
    clock,
  });
  return { clock, logger, exit, stop: () => stop() };
}

describe('screenpop-headless output that fails', () => {
  it('a write that throws loses that line only; later lines still go out', async () => {
    const lines: Array<Record<string, unknown>> = [];
    let failed = 0;
    const run = demo((text) => {
      const line = JSON.parse(text) as Record<string, unknown>;
      if (line.type === 'pop' && failed === 0) {
        failed++;
        throw Object.assign(new Error('write EIO'), { code: 'EIO' });
      }
      lines.push(line);
    });
    await waitFor(() => lines.some((l) => l.state === 'connected'), 'connected', {
      timeoutMs: 10_000,
    });
    await advanceWithRealIo(run.clock, 30_000);
    run.stop();
    expect(await run.exit).toBe(EXIT.ok);
    expect(failed).toBe(1);
    // Rings every 5 s from 2 s on: 6 in 30 s, the first of them lost.
    expect(lines.filter((l) => l.type === 'pop')).toHaveLength(5);
    expect(lines.filter((l) => l.type === 'fault')).toEqual([]);
    expect(rejections).toEqual([]);
    expect(
      run.logger.records.filter((r) => r.msg.startsWith('a stdout line could not be')),
    ).toHaveLength(1);
  });

  it('stdout gone: a clean stop, exit 4, said once in the log', async () => {
    const lines: Array<Record<string, unknown>> = [];
    let gone!: (why: OutputGone) => void;
    const run = demo(
      (text) => lines.push(JSON.parse(text) as Record<string, unknown>),
      new Promise<OutputGone>((resolve) => (gone = resolve)),
    );
    await waitFor(() => lines.some((l) => l.state === 'connected'), 'connected', {
      timeoutMs: 10_000,
    });
    gone({ code: 'EPIPE' });
    expect(await run.exit).toBe(EXIT.outputGone);
    const said = run.logger.records.map((r) => r.msg);
    expect(said.filter((m) => m.startsWith('stdout is gone'))).toHaveLength(1);
    expect(said.slice(-2)).toEqual(['stopping', 'stopped']);
  });
});
