/**
 * "Save diagnostics…" (tray) and `screenpop-headless --diagnostics <path>`: one .tar.gz that a
 * user can send to support. Modules contribute sections (DiagnosticsSection: a name and what to
 * put in it); the archive holds one JSON file per section (`log` as JSON lines) and a README.
 *
 * Everything is redacted on the way out, whatever a section returns: secrets registered with the
 * SecretRegistry (the API secret, access and refresh tokens) and bearer credentials are scrubbed,
 * fields named like secrets are masked, `user:password@` in addresses is removed, and telephone
 * numbers (7 digits or more, however written) are cut to their last four digits. The file is
 * written atomically.
 */
import { writeFileAtomic } from '../../../src-shared/files/atomic-file.ts';
import { jsonLine } from '../../../src-shared/files/json-text.ts';
import type { LogRecord, SecretRegistry } from '../../../src-shared/process/log.ts';
import { withoutSecrets } from '../settings/validate-settings.ts';
import { tarGz, type TarFile } from './tar-gz.ts';

/** What a module puts in the archive. `collect` may throw: the archive then says so and goes on. */
export interface DiagnosticsSection {
  /** The file's name in the archive (letters, digits, "-"): `<name>.json`. */
  name: string;
  collect(): unknown;
}

/** The sections of this process, added by the modules that own them. */
export class Diagnostics {
  private readonly sections = new Map<string, DiagnosticsSection>();

  /** Adds (or replaces) a section; returns its removal. */
  add(section: DiagnosticsSection): () => void {
    if (!/^[a-z][a-z0-9-]{0,40}$/.test(section.name))
      throw new Error(`diagnostics section name ${JSON.stringify(section.name)} is not usable`);
    this.sections.set(section.name, section);
    return () => {
      if (this.sections.get(section.name) === section) this.sections.delete(section.name);
    };
  }

  names(): string[] {
    return [...this.sections.keys()];
  }

  /** Each section's content, redacted (a section that fails gives `{ error }`). */
  async collect(secrets: SecretRegistry): Promise<Array<{ name: string; content: unknown }>> {
    const out: Array<{ name: string; content: unknown }> = [];
    for (const section of this.sections.values()) {
      let content: unknown;
      try {
        content = await section.collect();
      } catch (err) {
        content = { error: `this section could not be collected: ${describe(err)}` };
      }
      out.push({ name: section.name, content: redactForSupport(content, secrets) });
    }
    return out;
  }

  /** Writes the archive to `path` atomically; returns the names of the files in it. */
  async write(path: string, options: { secrets: SecretRegistry; now: number }): Promise<string[]> {
    const collected = await this.collect(options.secrets);
    const files: TarFile[] = collected.map(({ name, content }) =>
      name === 'log' && Array.isArray(content)
        ? {
            name: `screenpop-diagnostics/log.jsonl`,
            data: content.map((r) => jsonLine(r)).join(''),
          }
        : {
            name: `screenpop-diagnostics/${name}.json`,
            data: JSON.stringify(content, null, 2) + '\n',
          },
    );
    files.unshift({
      name: 'screenpop-diagnostics/README.txt',
      data: readme(new Date(options.now)),
    });
    // Last line of defence: every file's text scrubbed once more as a whole.
    for (const f of files) f.data = options.secrets.scrub(f.data);
    // A path a person named: a regular file or a new name in a folder that exists.
    await writeFileAtomic(path, tarGz(files, options.now), 0o600, { createFolder: false });
    return files.map((f) => f.name);
  }
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function readme(at: Date): string {
  return [
    `Screenpop diagnostics, written ${at.toISOString()}.`,
    '',
    'One JSON file per part (log.jsonl: one log line per line). Removed before writing: the API',
    'secret and every access or refresh token, fields named like secrets, user names and passwords',
    'in addresses; telephone numbers are cut to their last four digits.',
    '',
  ].join('\n');
}

/** A digit in any script (full-width ０-９ too). */
const DIGIT = String.raw`\p{Nd}`;
/** Between digits: spaces, ( ) - . / (as 415.555.0124, 030/1234567), their full-width and dash forms, or percent-encoded. */
const SEPARATOR = String.raw`(?:[\s()./\-\u2010-\u2015\u2212\uff08\uff09\uff0d\uff0e\uff0f]|%2[0389dDfF])`;
/** A leading plus, as is, full-width or percent-encoded. */
const PLUS = String.raw`(?:[+\uff0b]|%2[bB])`;
/** Not inside a word, a path or an address, but right after `tel:` or `sip:`. */
const START = String.raw`(?:(?<=(?:tel|sip|sips|callto):)|(?<![\p{L}\p{Nd}_.:/\\-]))`;
/** Not an ISO date (2026-11-23). */
const NOT_ISO_DATE = String.raw`(?!\d{4}-\d{2}-\d{2})`;
const END = String.raw`(?![\p{L}\p{Nd}_])`;

/**
 * A telephone number as caller ID, settings or a URL hold it: 7 or more digits, a leading "+" and
 * separators between them; not inside a word, a path, an address (but after `tel:` or `sip:`) or
 * an ISO date. IP addresses, dates and versions are left alone (`looksLikeNumber`).
 */
const PHONE = new RegExp(
  [START, NOT_ISO_DATE, PLUS, '?', DIGIT, '(?:', SEPARATOR, '{0,2}', DIGIT, '){6,}', END].join(''),
  'gu',
);

/** False for a match that is an IPv4 address (203.0.113.7) or a date (23.11.2026, 23/11/2026). */
function looksLikeNumber(match: string): boolean {
  const text = decodeURIComponentSafe(match).normalize('NFKC');
  if (/^\d{1,3}(?:\.\d{1,3}){3}$/.test(text)) return false;
  if (/^\d{1,4}([./-])\d{1,2}\1\d{1,4}$/.test(text)) return false;
  return true;
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** A number cut to its last four digits: "+14155550123" -> "…0123" (full-width digits as ASCII). */
export function maskNumbers(text: string): string {
  return text.replace(PHONE, (m) =>
    looksLikeNumber(m)
      ? `…${decodeURIComponentSafe(m)
          .normalize('NFKC')
          .replace(/\P{Nd}/gu, '')
          .slice(-4)}`
      : m,
  );
}

/** Keys whose text is a timestamp or an id, never a number to mask. */
const KEEP_AS_IS = new Set(['time', 'at']);

/** A deep copy fit for support: secrets removed (see the file comment), numbers and notes masked. */
export function redactForSupport(value: unknown, secrets: SecretRegistry): unknown {
  const clean = withoutSecrets(secrets.redact(value));
  return mask(clean, '');
}

/**
 * Keys whose text is the agent's note on a call (the note card, issue 39; the CRM log queue's
 * records): personal text of the agent's, never in an archive; only its length is said.
 */
const NOTE_KEYS = new Set(['note', 'notes', 'callNote']);

function mask(value: unknown, key: string): unknown {
  if (NOTE_KEYS.has(key) && typeof value === 'string') return `[note: ${value.length} characters]`;
  if (typeof value === 'string') return KEEP_AS_IS.has(key) ? value : maskNumbers(value);
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => mask(v, key));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = mask(v, k);
  return out;
}

/** The `log` section from a LogRing. */
export function logSection(
  snapshot: () => { items: LogRecord[]; dropped: number },
): DiagnosticsSection {
  return { name: 'log', collect: () => snapshot().items };
}
