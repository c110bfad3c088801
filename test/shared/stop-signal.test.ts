/**
 * The one stop rule of the runner, the relay and the simulator (src-shared/process/stop-signal.ts), on a
 * fake `process`. The real commands are stopped from outside in test/blackbox/commands.test.ts and
 * service.test.ts.
 */
import { describe, expect, it } from 'vitest';
import {
  parseProcStat,
  procStat,
  whenToStop,
  type ProcessInfo,
  type StopSource,
} from '../../src-shared/process/stop-signal.ts';

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

  it('under npm with its shell between: resolves once npm (the shell’s parent) is gone', async () => {
    // npm (pid 50) -> sh (pid 100) -> this program. npm SIGKILLed: the shell is reparented to 1.
    const table = new Map<number, ProcessInfo>([[100, { name: 'sh', ppid: 50 }]]);
    const proc = new FakeProcess({ npm_lifecycle_event: 'sim' });
    const stop = whenToStop(proc, { parentPollMs: 5, lookup: (pid) => table.get(pid) });
    await new Promise((r) => setTimeout(r, 30));
    table.set(100, { name: 'sh', ppid: 1 });
    expect(await stop).toBe('parent-exited');
    expect(proc.ppid).toBe(100); // its own parent never changed

    // A subreaper instead of PID 1, and a shell gone between two looks: the same.
    const reaped = new Map<number, ProcessInfo>([[100, { name: 'dash', ppid: 50 }]]);
    const second = whenToStop(new FakeProcess({ npm_lifecycle_event: 'relay' }), {
      parentPollMs: 5,
      lookup: (pid) => reaped.get(pid),
    });
    reaped.set(100, { name: 'dash', ppid: 7 });
    expect(await second).toBe('parent-exited');
    const vanished = new Map<number, ProcessInfo>([[100, { name: 'sh', ppid: 50 }]]);
    const third = whenToStop(new FakeProcess({ npm_lifecycle_event: 'headless' }), {
      parentPollMs: 5,
      lookup: (pid) => vanished.get(pid),
    });
    vanished.delete(100);
    expect(await third).toBe('parent-exited');
  });

  it('watches only its parent when that is npm itself, not a shell (bash exec’d the program)', async () => {
    const table = new Map<number, ProcessInfo>([[100, { name: 'npm run sim', ppid: 50 }]]);
    let resolved = false;
    void whenToStop(new FakeProcess({ npm_lifecycle_event: 'sim' }), {
      parentPollMs: 5,
      lookup: (pid) => table.get(pid),
    }).then(() => (resolved = true));
    table.set(100, { name: 'npm run sim', ppid: 1 }); // npm's own parent went: not ours to follow
    await new Promise((r) => setTimeout(r, 50));
    expect(resolved).toBe(false);
  });

  it('a configured script-shell counts as npm’s shell; a lookup that throws is survived', async () => {
    const table = new Map<number, ProcessInfo>([[100, { name: 'fish', ppid: 50 }]]);
    const stop = whenToStop(
      new FakeProcess({ npm_lifecycle_event: 'sim', npm_config_script_shell: '/usr/bin/fish' }),
      { parentPollMs: 5, lookup: (pid) => table.get(pid) },
    );
    table.set(100, { name: 'fish', ppid: 1 });
    expect(await stop).toBe('parent-exited');

    let throws = false;
    let resolved = false;
    void whenToStop(new FakeProcess({ npm_lifecycle_event: 'sim' }), {
      parentPollMs: 5,
      lookup: (pid) => {
        if (throws) throw new Error('EMFILE');
        return pid === 100 ? { name: 'sh', ppid: 50 } : undefined;
      },
    }).then(() => (resolved = true));
    throws = true;
    await new Promise((r) => setTimeout(r, 50));
    expect(resolved).toBe(false); // a failed look saw nothing; nothing thrown out of the timer
  });

  it('reads /proc/<pid>/stat: a name with spaces and parentheses, a real entry, a gone one', () => {
    expect(parseProcStat('4242 (a) b (c)) S 77 4242 4242 0 -1 4194304')).toEqual({
      name: 'a) b (c)',
      ppid: 77,
    });
    expect(parseProcStat('garbage')).toBeUndefined();
    if (process.platform === 'linux')
      expect(procStat(process.pid)).toEqual({ name: expect.any(String), ppid: process.ppid });
    expect(procStat(2 ** 30)).toBeUndefined(); // no such process (and no /proc: the same)
  });
});
