/**
 * Bookkeeping of rings against pops, as a user would judge the runner: every ring sent to the
 * user's extension pops (none missed), once (none doubled), and while it is still fresh (none
 * stale: the pop line came out no later than the stale limit after the ring's server time).
 */
import type { RunnerProcess, SimProcess } from './services.ts';

export interface LedgerFigures {
  sent: number;
  popped: number;
  missed: string[];
  doubled: string[];
  stale: string[];
  /** Pops of calls this ledger never sent (another extension's call, or a demo's). */
  unexpected: string[];
  /** Rings that popped with a caller other than the one that rang (e.g. none). */
  wrongCaller: string[];
}

/** Outside numbers the rings come from (caller ID is any string; these are ordinary ones). */
const CALLERS = ['+14155550123', '+442079460958', '+12125550187', '+493090182345', '+61298765432'];

export class RingLedger {
  private readonly sent = new Map<string, { sentAt: number; from: string }>();
  private readonly runner: RunnerProcess;
  private readonly staleMs: number;
  private n = 0;

  /** `staleMs`: the runner's `--stale-ring-sec` in ms; a pop may come out up to 2 s after its decision. */
  constructor(runner: RunnerProcess, staleMs = 45_000) {
    this.runner = runner;
    this.staleMs = staleMs + 2_000;
  }

  /** Rings `to` from an outside number through the simulator's control surface. */
  async ring(sim: SimProcess, to = '101'): Promise<string> {
    const from = CALLERS[this.n++ % CALLERS.length]!;
    const callId = await sim.ring(from, to);
    this.sent.set(callId, { sentAt: Date.now(), from });
    return callId;
  }

  /** When each ring was sent (wall-clock ms), by call_id. */
  sentTimes(): Map<string, number> {
    return new Map([...this.sent].map(([id, r]) => [id, r.sentAt]));
  }

  popCount(callId: string): number {
    return this.runner.pops().filter((p) => p.call_id === callId).length;
  }

  /** Waits until every ring sent so far has popped (bounded), then ends those calls. */
  async settle(sim: SimProcess | undefined, timeoutMs = 20_000): Promise<void> {
    const open = [...this.sent.keys()];
    await this.runner
      .waitFor(() => open.every((id) => this.popCount(id) > 0), 'the pops', timeoutMs)
      .catch(() => {}); // what is still missing shows in figures()
    if (sim) for (const id of open) await sim.setState(id, 'ended').catch(() => {}); // a forgotten call (restart) is fine
  }

  /** One ring, and wait for its pop. */
  async ringAndSettle(sim: SimProcess, timeoutMs = 20_000): Promise<string> {
    const id = await this.ring(sim);
    await this.settle(sim, timeoutMs);
    return id;
  }

  figures(): LedgerFigures {
    const pops = this.runner.pops();
    const byCall = new Map<string, typeof pops>();
    for (const p of pops) {
      const id = String(p.call_id);
      byCall.set(id, [...(byCall.get(id) ?? []), p]);
    }
    const ids = [...this.sent.keys()];
    return {
      sent: ids.length,
      popped: ids.filter((id) => byCall.has(id)).length,
      missed: ids.filter((id) => !byCall.has(id)),
      doubled: ids.filter((id) => (byCall.get(id)?.length ?? 0) > 1),
      stale: ids.filter((id) =>
        (byCall.get(id) ?? []).some((p) => p.at - Number(p.timestamp) > this.staleMs),
      ),
      unexpected: [...byCall.keys()].filter((id) => !this.sent.has(id)),
      wrongCaller: ids.filter((id) =>
        (byCall.get(id) ?? []).some((p) => p.from !== this.sent.get(id)!.from),
      ),
    };
  }
}
