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

/** A scheme pair: the encrypted one, and the plain one allowed only to this computer. */
export type SchemePair = readonly [secure: string, plain: string];
export const HTTP_SCHEMES: SchemePair = ['https:', 'http:'];
export const WS_SCHEMES: SchemePair = ['wss:', 'ws:'];

/**
 * "https, or http only on loopback": the one rule for every address a token, a secret or a sign-in
 * crosses (the service's and the relay's addresses in settings and Test connection, the relay's
 * stream, an OpenID issuer, the relay's tenants). `pairs` names the schemes the address may use
 * (http by default; the relay's address also ws).
 */
export function isSecureOrLoopback(
  url: URL,
  pairs: readonly SchemePair[] = [HTTP_SCHEMES],
): boolean {
  return pairs.some(
    ([secure, plain]) =>
      url.protocol === secure || (url.protocol === plain && isLoopbackHost(url.hostname)),
  );
}
