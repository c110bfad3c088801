/**
 * Which certificate authorities every TLS connection trusts (API calls, the service's WebSocket,
 * the relay's): Node's bundled roots, plus the operating system's store where this Node can read it
 * (`tls.getCACertificates('system')`, Node 22.15+ / 23.5+), plus the PEM file an administrator
 * names (the CA of a TLS-inspecting proxy or of a private relay). The result is one `ca` list
 * passed explicitly to every connection, so the same decision holds for each of them.
 *
 * Reading the system store and building a TLS context from its ~700 certificates costs hundreds of
 * milliseconds and megabytes (a CPU profile of the runner's start: 459 ms in
 * cacheSystemCACertificates, 376 ms in the secure context, under load). So `lazyTrust` checks only
 * the administrator's CA file when the transport is made (that file alone: a missing or broken one
 * is said at start), and reads the rest on the first TLS connection. A run that never speaks TLS
 * (`--demo` against the simulator on this computer, over http) never reads the store.
 */
import tls from 'node:tls';
import { X509Certificate } from 'node:crypto';
import { FileShapeError, readBoundedFileSync } from '../files/bounded-file.ts';

export interface Trust {
  /** The `ca` option for tls.connect; undefined: Node's defaults (nothing was added). */
  ca: string[] | undefined;
  /** What was decided, in words for the diagnostics and the log. */
  decisions: string[];
  /** The CA file could not be used: the words to show (the connection falls back on the rest). */
  problem?: string;
}

type GetCACertificates = (type: 'default' | 'system' | 'bundled' | 'extra') => string[];

export interface TrustInput {
  /** An administrator's PEM file of extra CAs; '' for none. */
  caFile: string;
  readFile: (path: string) => string;
  /** For tests: the Node API, or undefined to act as a Node without it. */
  getCACertificates?: GetCACertificates | undefined;
  /** NODE_EXTRA_CA_CERTS as set in the environment (default: process.env's). */
  extraCaCertsVariable?: string | undefined;
}

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** A bundle of every public CA is about 250 KB; a CA file above this is not one. */
export const MAX_CA_FILE_BYTES = 4 * 1024 * 1024;

/**
 * A CA file's text, read as readCaFile's callers should: a regular file only, at most
 * MAX_CA_FILE_BYTES (a FIFO named as the CA file would otherwise block the process for ever).
 */
export function readCaText(path: string): string {
  return readBoundedFileSync(path, MAX_CA_FILE_BYTES).toString('utf8');
}

/** The certificates of a PEM file, each checked to be one; throws with words naming the file. */
export function readCaFile(path: string, readFile: (path: string) => string): string[] {
  let text: string;
  try {
    text = readFile(path);
  } catch (error) {
    if (error instanceof FileShapeError)
      throw new Error(
        error.shape === 'not-a-file'
          ? `The CA file ${path} is not a regular file (a FIFO, a device or a folder).`
          : `The CA file ${path} is larger than ${error.maxBytes} bytes: it is not a CA file.`,
        { cause: error },
      );
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new Error(`The CA file ${path} cannot be read (${code}).`, { cause: error });
  }
  const blocks = text.match(PEM_BLOCK) ?? [];
  if (blocks.length === 0)
    throw new Error(`The CA file ${path} holds no PEM certificate (-----BEGIN CERTIFICATE-----).`);
  for (const block of blocks) {
    try {
      new X509Certificate(block);
    } catch (error) {
      throw new Error(`The CA file ${path} holds a certificate that cannot be read.`, {
        cause: error,
      });
    }
  }
  return blocks;
}

function nodeGetCACertificates(): GetCACertificates | undefined {
  const fn = (tls as { getCACertificates?: GetCACertificates }).getCACertificates;
  return typeof fn === 'function' ? fn.bind(tls) : undefined;
}

/** What the administrator's CA file gives: its certificates, or the words of its problem. */
interface CaFileResult {
  certificates: string[];
  /** For the decisions: 'CA file: none', 'CA file: <path> (n certificates)' or the problem. */
  decision: string;
  problem?: string;
}

function checkCaFile(input: TrustInput): CaFileResult {
  const file = input.caFile.trim();
  if (!file) return { certificates: [], decision: 'CA file: none' };
  try {
    const certificates = readCaFile(file, input.readFile);
    const n = certificates.length;
    return { certificates, decision: `CA file: ${file} (${n} certificate${n === 1 ? '' : 's'})` };
  } catch (error) {
    const problem = (error as Error).message;
    return { certificates: [], decision: `CA file: ${problem}`, problem };
  }
}

/** Node's roots and the system store (and NODE_EXTRA_CA_CERTS), with the CA file's result added. */
function trustWith(input: TrustInput, caFile: CaFileResult): Trust {
  const get = 'getCACertificates' in input ? input.getCACertificates : nodeGetCACertificates();
  const decisions: string[] = [];
  let base: string[];
  const variable =
    'extraCaCertsVariable' in input ? input.extraCaCertsVariable : process.env.NODE_EXTRA_CA_CERTS;
  if (get) {
    // 'default' is what Node trusts anyway: bundled roots plus NODE_EXTRA_CA_CERTS, when this
    // process read it ('extra'). A packaged Screenpop does not: its nodeOptions fuse is off.
    const defaults = get('default');
    const system = safely(() => get('system'));
    const extra = safely(() => get('extra'));
    base = [...defaults, ...system];
    decisions.push(
      `trust: Node's roots (${defaults.length - extra.length}), the system store (${system.length})`,
      variable
        ? extra.length > 0
          ? `NODE_EXTRA_CA_CERTS: ${variable} (${extra.length} certificate${extra.length === 1 ? '' : 's'})`
          : `NODE_EXTRA_CA_CERTS: ${variable} is set but not used (a packaged Screenpop ignores it; use the caFile setting)`
        : 'NODE_EXTRA_CA_CERTS: not set',
    );
  } else {
    base = [...tls.rootCertificates];
    decisions.push(
      `trust: Node's roots (${base.length}); this Node (${process.version}) cannot read the system store`,
    );
  }
  decisions.push(caFile.decision);
  const added = caFile.certificates;
  return {
    ca: added.length > 0 ? [...base, ...added] : get ? base : undefined,
    decisions,
    ...(caFile.problem !== undefined && { problem: caFile.problem }),
  };
}

/** The trust of a transport: the CA file checked now, the rest read when first asked for. */
export interface TrustSource {
  /** The CA file's decision ('CA file: none', its path and count, or its problem), known now. */
  readonly caFile: string;
  /** The CA file could not be used: the words to show (known now, as the decision). */
  readonly problem: string | undefined;
  /** True once `get()` has read the system store (a TLS connection, or the diagnostics, asked). */
  readonly loaded: boolean;
  /** The whole Trust: read on the first call (the system store, Node's roots), then kept. */
  get(): Trust;
}

/**
 * A TrustSource for `input`: reads and checks the CA file now (a small file the administrator
 * names: its problem is a start-up warning, as before), and the system store on the first `get()`.
 */
export function lazyTrust(input: TrustInput): TrustSource {
  const caFile = checkCaFile(input);
  let trust: Trust | undefined;
  return {
    caFile: caFile.decision,
    problem: caFile.problem,
    get loaded() {
      return trust !== undefined;
    },
    get: () => (trust ??= trustWith(input, caFile)),
  };
}

function safely(read: () => string[]): string[] {
  try {
    return read();
  } catch {
    return [];
  }
}
