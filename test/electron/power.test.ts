import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { WakeReason } from '../../src-main/core/events/contracts.ts';
import { watchPower } from '../../src-main/electron/power.ts';
import { FakeClock } from '../../rigs/fake-clock.ts';

describe('watchPower', () => {
  it('wakes the engine on resume, unlock and the network coming back', async () => {
    const clock = new FakeClock();
    const pm = new EventEmitter();
    let online = true;
    const wakes: WakeReason[] = [];
    const stop = watchPower({
      powerMonitor: pm as never,
      isOnline: () => online,
      clock,
      wake: (r) => wakes.push(r),
      onlinePollMs: 1000,
    });
    pm.emit('resume');
    pm.emit('unlock-screen');
    online = false;
    await clock.advance(1000);
    expect(wakes).toEqual(['resume', 'resume']);
    online = true;
    await clock.advance(1000);
    await clock.advance(1000);
    expect(wakes).toEqual(['resume', 'resume', 'online']);
    stop();
    pm.emit('resume');
    online = false;
    await clock.advance(1000);
    online = true;
    await clock.advance(5000);
    expect(wakes).toHaveLength(3);
    expect(clock.pendingTimers()).toBe(0);
  });
});
