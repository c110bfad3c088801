/**
 * Bundles the webhook relay (src-relay/cli.ts) with esbuild into one CommonJS file,
 * dist-relay/screenpop-relay.cjs, which `npm run relay`, the relay package's `start`, the container
 * image (deploy/relay/Dockerfile) and the systemd unit run. Run from the sources, Node strips the
 * types of every file at each start and keeps the stripper in memory: the built relay starts with
 * about 40 MiB less resident memory (`npm run bench:relay` measures both: BENCH_RELAY_FROM).
 * How it is built (minified, atomic, inputs.json for `--if-stale`): scripts/node-bundle.ts.
 *
 * Everything is bundled (our sources and ioredis, jose, prom-client, ws, zod, FormatJS) except ws's
 * optional native helpers: the bundle runs alone, without node_modules (the image holds only it).
 * The sources run with `npm run relay:dev`.
 *
 * Run: npm run build:relay (npm ci runs it too, as the `prepare` script). `--if-stale`: build only
 * when the sources changed since the last build, silently otherwise (`npm run relay` runs this
 * first, `prerelay`, so an edit or a `git pull` is never run from an old build).
 */
import { buildFromCommandLine, type NodeBundleSpec } from './node-bundle.ts';

const RELAY: NodeBundleSpec = {
  name: 'screenpop-relay',
  entry: 'src-relay/cli.ts',
  dir: 'dist-relay',
  file: 'screenpop-relay.cjs',
  // kerberos: the optional native Kerberos binding of proxy authentication (src-shared/net/gssapi.ts).
  externals: ['kerberos', 'bufferutil', 'utf-8-validate'],
  script: import.meta.url,
};

buildFromCommandLine(RELAY);
