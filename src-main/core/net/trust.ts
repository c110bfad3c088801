/**
 * Which certificate authorities every TLS connection trusts (API calls, the service's WebSocket,
 * the relay's): Node's bundled roots, plus the operating system's store where this Node can read it
 * (`tls.getCACertificates('system')`, Node 22.15+ / 23.5+), plus the PEM file an administrator
 * names (the CA of a TLS-inspecting proxy or of a private relay). The result is one `ca` list
 * passed explicitly to every connection, so the same decision holds for each of them.
 */
import tls from 'node:tls';
import { X509Certificate } from 'node:crypto';
import { FileShapeError, readBoundedFileSync } from '../../../src-shared/bounded-file.ts';

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

export function loadTrust(input: TrustInput): Trust {
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
  const file = input.caFile.trim();
  if (!file) {
    decisions.push('CA file: none');
    return { ca: get ? base : undefined, decisions };
  }
  try {
    const extra = readCaFile(file, input.readFile);
    decisions.push(
      `CA file: ${file} (${extra.length} certificate${extra.length === 1 ? '' : 's'})`,
    );
    return { ca: [...base, ...extra], decisions };
  } catch (error) {
    const problem = (error as Error).message;
    decisions.push(`CA file: ${problem}`);
    return { ca: get ? base : undefined, decisions, problem };
  }
}

function safely(read: () => string[]): string[] {
  try {
    return read();
  } catch {
    return [];
  }
}
