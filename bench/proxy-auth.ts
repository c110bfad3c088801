/**
 * What a proxy sign-in costs per connection: `npm run bench:proxy-auth [-- --tunnels N]`.
 *
 * Starts the test rig's squid (test/blackbox/squid.ts) three times, asking for NTLM
 * (ntlm_fake_auth), Negotiate (a real MIT KDC on 127.0.0.1, the user's ticket from kinit) and
 * Basic, and opens N CONNECT tunnels through each with the transport's tunnel (one authenticator
 * per run, as one transport has), one after the other, to a local TCP server. Prints per scheme:
 * the first tunnel (no scheme known yet: one CONNECT without credentials, then the legs) and the
 * later ones (the remembered scheme leads), in legs, TCP connections and milliseconds (median and
 * max). Needs squid and krb5-kdc (apt-get install squid krb5-kdc krb5-admin-server krb5-user).
 */
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { loadGssapi } from '../src-shared/net/gssapi.ts';
import { ProxyAuthenticator } from '../src-shared/net/proxy-auth.ts';
import { openTunnel, type AuthOutcome } from '../src-shared/net/tunnel.ts';
import { ProcessGroup } from '../rigs/processes.ts';
import { KerberosRealm, SquidProxy, squidAndKdcAvailable } from '../rigs/squid.ts';

const arg = process.argv.indexOf('--tunnels');
const TUNNELS = arg > 0 ? Number(process.argv[arg + 1]) : 50;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

async function main(): Promise<void> {
  if (!squidAndKdcAvailable('bench/proxy-auth.ts')) process.exit(1);
  const group = new ProcessGroup();
  const target = net.createServer((s) => s.end()).listen(0, '127.0.0.1');
  await new Promise((done) => target.once('listening', done));
  const targetPort = (target.address() as AddressInfo).port;
  try {
    const realm = await new KerberosRealm(group).start();
    Object.assign(process.env, realm.kinit('bench.cc'));
    const runs = [
      { name: 'NTLM', squid: { ntlm: true }, auth: 'CORP\\agent7:any' },
      { name: 'Negotiate', squid: { negotiate: realm }, auth: undefined },
      { name: 'Basic', squid: { basic: true }, auth: 'agent7:any' },
    ] as const;
    for (const run of runs) {
      const squid = await new SquidProxy(group, run.squid).start();
      const auth = new ProxyAuthenticator({
        mode: 'automatic',
        gssapi: () => loadGssapi(),
        onSecret: () => {},
        now: () => Date.now(),
      });
      const outcomes: AuthOutcome[] = [];
      const proxy = { host: 'localhost', port: squid.port, ...(run.auth && { auth: run.auth }) };
      for (let i = 0; i < TUNNELS; i++) {
        const socket = await openTunnel(
          proxy,
          { host: '127.0.0.1', port: targetPort },
          {
            deadlineMs: 10_000,
            auth,
            onAuthenticated: (o) => outcomes.push(o),
          },
        );
        socket.destroy();
      }
      const [first, ...later] = outcomes;
      const ms = later.map((o) => o.ms);
      console.log(
        `${run.name.padEnd(9)} first tunnel: ${first?.legs} legs, ${first?.connections} connection(s), ${first?.ms} ms; ` +
          `later ${later.length}: ${median(later.map((o) => o.legs))} legs, ${median(later.map((o) => o.connections))} connection(s), ` +
          `median ${median(ms)} ms, max ${Math.max(...ms)} ms; squid answered 407 ${squid.challengesTo(targetPort)} times`,
      );
    }
  } finally {
    target.close();
    await group.cleanup();
  }
}

await main();
