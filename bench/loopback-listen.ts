/**
 * Preloaded (`node --import`) into a server the benchmark runs but did not write (smee.io, see
 * smee-server.ts), which listens on every interface: its listen on 0.0.0.0, ::, or no host binds
 * 127.0.0.1 instead, so a benchmark's server is reachable from this machine only.
 */
import net from 'node:net';

const ANY = new Set([undefined, '', '0.0.0.0', '::']);
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (this: net.Server, ...args: unknown[]) {
  const first = args[0];
  if (first && typeof first === 'object' && ANY.has((first as net.ListenOptions).host))
    args[0] = { ...first, host: '127.0.0.1' };
  else if (typeof first === 'number' && (typeof args[1] !== 'string' || ANY.has(args[1])))
    args.splice(1, typeof args[1] === 'string' ? 1 : 0, '127.0.0.1');
  return listen.apply(this, args as Parameters<typeof listen>);
} as typeof listen;
