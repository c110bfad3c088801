/**
 * The one stop rule of the runner, the relay and the simulator (src-shared/stop-signal.ts), on a
 * fake `process`. The real commands are stopped from outside in test/blackbox/commands.test.ts and
 * service.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { whenToStop, type StopSource } from '../../src-shared/stop-signal.ts';

class FakeProcess implements StopSource {
  ppid = 100;
  readonly env: Record<string, string | undefined>;
  private readonly listeners = new Map<string, Array<() => void>>();
  constructor(env: Record<string, string | undefined> = {}) {
    this.env = env;
  }
  on(signal: 'SIGINT' | 'SIGTERM', listener: () => void): this {
    this.listeners.set(signal, [...(this.listeners.get(signal) ?? []), listener]);
    return this;
  }
  send(signal: 'SIGINT' | 'SIGTERM'): void {
    for (const l of this.listeners.get(signal) ?? []) l();
  }
}

describe('whenToStop', () => {
  it('resolves with the first signal; later ones go to onRepeat (default: ignored)', async () => {
    const proc = new FakeProcess();
    const repeats: string[] = [];
    const stop = whenToStop(proc, { onRepeat: (s) => repeats.push(s) });
    proc.send('SIGTERM');
    proc.send('SIGINT');
    proc.send('SIGTERM');
    expect(await stop).toBe('SIGTERM');
    expect(repeats).toEqual(['SIGINT', 'SIGTERM']);
    const quiet = new FakeProcess();
    const second = whenToStop(quiet);
    quiet.send('SIGINT');
    expect(() => quiet.send('SIGINT')).not.toThrow();
    expect(await second).toBe('SIGINT');
  });

  it('under npm, resolves once the parent is gone; not otherwise', async () => {
    const npm = new FakeProcess({ npm_lifecycle_event: 'sim' });
    const stop = whenToStop(npm, { parentPollMs: 5 });
    npm.ppid = 1; // reparented: npm went away
    expect(await stop).toBe('parent-exited');

    const plain = new FakeProcess();
    let resolved = false;
    void whenToStop(plain, { parentPollMs: 5 }).then(() => (resolved = true));
    plain.ppid = 1; // under nohup or `&`, a parent that exits is normal
    await new Promise((r) => setTimeout(r, 50));
    expect(resolved).toBe(false);
  });
});
