/**
 * Is a host this computer? The one rule for every place that allows plain http or ws only on
 * loopback (settings, the runner's flags, the relay client, Test connection, the dev server, the
 * relay's own configuration check): `localhost`, the IPv4 loopback block 127.0.0.0/8 (RFC 1122
 * section 3.2.1.3) and `::1`. IPv6 may be written as `URL.hostname` writes it, in brackets.
 * Nothing else counts: not a name that resolves to 127.0.0.1, which the network could change.
 */
const IPV4_LOOPBACK = /^127(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1');
  return h === 'localhost' || h === '::1' || IPV4_LOOPBACK.test(h);
}
