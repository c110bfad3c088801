import { describe, expect, it } from 'vitest';
import { externalAddresses, watchNetwork } from '../../src-main/core/net/network-watch.ts';
import type { WakeReason } from '../../src-main/core/events/contracts.ts';
import { FakeClock } from '../../rigs/fake-clock.ts';

describe('watchNetwork (the runner’s "network came back")', () => {
  it('wakes with online when an address appears, not when one goes, and stops', async () => {
    const clock = new FakeClock();
    let addresses = ['192.168.1.20'];
    const woken: WakeReason[] = [];
    const stop = watchNetwork({ addresses: () => addresses, clock, wake: (r) => woken.push(r) });
    await clock.advance(5_000);
    expect(woken).toEqual([]);
    addresses = []; // Wi-Fi gone: the sockets will find out; nothing to retry yet
    await clock.advance(5_000);
    expect(woken).toEqual([]);
    addresses = ['192.168.1.20']; // back
    await clock.advance(5_000);
    expect(woken).toEqual(['online']);
    addresses = ['192.168.1.20', '10.8.0.2']; // a VPN comes up
    await clock.advance(5_000);
    expect(woken).toEqual(['online', 'online']);
    stop();
    addresses = ['172.16.0.9'];
    await clock.advance(60_000);
    expect(woken).toHaveLength(2);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('keeps watching when reading the addresses throws, and wakes once they come back', async () => {
    const clock = new FakeClock();
    const machine: { addresses?: string[] } = {}; // none readable yet
    const woken: WakeReason[] = [];
    const stop = watchNetwork({
      addresses: () => {
        if (!machine.addresses) throw new Error('uv_interface_addresses: unknown system error');
        return machine.addresses;
      },
      clock,
      wake: (r) => woken.push(r),
    });
    await clock.advance(15_000);
    expect(woken).toEqual([]);
    machine.addresses = ['192.168.1.20'];
    await clock.advance(5_000);
    expect(woken).toEqual(['online']);
    stop();
  });

  it('compares the non-internal addresses of os.networkInterfaces()', () => {
    expect(
      externalAddresses({
        lo: [{ address: '127.0.0.1', internal: true }],
        eth0: [
          { address: '192.168.1.20', internal: false },
          { address: 'fe80::1', internal: false },
        ],
        wlan0: undefined,
      }),
    ).toEqual(['192.168.1.20', 'fe80::1']);
  });
});
