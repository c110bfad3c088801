/**
 * The relay's address as the documents give it: README's organisation-mode steps, the runner's
 * README and `--help` say `--relay-url https://relay.example.org`, and `relay users add` prints the
 * runner's command with `<https://this relay>`. Each documented command is read from the document's
 * own text and parsed as the runner parses its arguments; before, every one of them stopped with
 * "must start with wss://". The relay is one address: https (wss accepted too), http (or ws) only
 * on this computer; relay-source.ts's relayStreamUrl turns it into the stream's wss address.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { english } from '../../src-shared/i18n/phrase.ts';
import { createTranslator } from '../../src-shared/i18n/translator.ts';
import { parseHeadlessArgs, usage, UsageError } from '../../src-main/headless/args.ts';
import { relayHttpUrl, relayStreamUrl } from '../../src-main/core/relay-client/relay-source.ts';
import { applyPatch, defaultSettings } from '../../src-main/core/settings/validate-settings.ts';

const CODE = 'K7QM-2RXD-94TW';

/** The runner's arguments in a documented command: after `screenpop-headless` or `headless --`. */
function argumentsOf(command: string): string[] {
  // Words as a shell splits them: a "quoted number" is one.
  const words = [...command.replace(/#.*$/, '').matchAll(/"([^"]*)"|(\S+)/g)].map(
    (m) => m[1] ?? m[2]!,
  );
  const start = words.findIndex((w) => w === 'screenpop-headless' || w === '--');
  return words
    .slice(start + 1)
    .map((w) => (w === '<code>' || w === '<name>' ? (w === '<code>' ? CODE : 'acme') : w))
    .map((w) => w.replace(/^<(https?:\/\/[^>]*)>$/, '$1'));
}

/** Every runner command with --relay-url in a Markdown file: inline code spans and code lines. */
function documentedCommands(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const blocks = [...text.matchAll(/```[a-z]*\n([\s\S]*?)```/g)].map((m) => m[1]!);
  const prose = text.replace(/```[a-z]*\n[\s\S]*?```/g, '');
  const spans = [...prose.matchAll(/`([^`]+)`/g)].map((m) => m[1]!.replace(/\s*\n\s*/g, ' '));
  // A command continued over lines (`\` at a line's end) is one command.
  return [...spans, ...blocks.flatMap((b) => b.replace(/\\\n\s*/g, ' ').split('\n'))]
    .filter((c) => /(screenpop-headless|headless --) .*--relay-url \S/.test(c))
    .filter((c) => !c.includes('`'));
}

function parse(args: string[]): { relayUrl: string } | string {
  try {
    return parseHeadlessArgs(args);
  } catch (error) {
    if (error instanceof UsageError) return english(error.words);
    throw error;
  }
}

describe('--relay-url as the documents give it', () => {
  it("README's organisation-mode steps and the runner's README parse as written", () => {
    const commands = [
      ...documentedCommands('README.md'),
      ...documentedCommands('src-main/headless/README.md'),
    ];
    // README step 3 (enrol), the runner README's enrol and later-run lines.
    expect(commands.filter((c) => c.includes('https://relay.example.org')).length).toBe(3);
    for (const command of commands) {
      const args = argumentsOf(command);
      const relayUrl = args[args.indexOf('--relay-url') + 1];
      expect(parse(args), command).toMatchObject({ relayUrl });
    }
  });

  it("--help's organisation-mode line parses as written", () => {
    const line = usage(createTranslator('en'))
      .split('\n')
      .find((l) => l.trim().startsWith('screenpop-headless --relay-url'));
    expect(line).toBeDefined();
    const args = argumentsOf(line!.replace(/\[--enrol <code>\]/, `--enrol ${CODE}`));
    expect(parse(args)).toMatchObject({
      relayUrl: 'https://relay.example.org',
      relayTenant: 'acme',
      enrol: CODE,
    });
  });

  it('is https or wss anywhere, http or ws only on this computer, and refused otherwise in words', () => {
    for (const url of [
      'https://relay.example.org',
      'wss://relay.example.org',
      'http://127.0.0.1:8787',
      'ws://localhost:8787',
    ]) {
      expect(parse(['--relay-url', url, '--relay-tenant', 'acme']), url).toMatchObject({
        relayUrl: url,
      });
      expect(applyPatch(defaultSettings(), { relayUrl: url }).ok, url).toBe(true);
    }
    for (const url of [
      'http://relay.example.org',
      'ws://relay.example.org',
      'ftp://relay.example.org',
    ])
      expect(parse(['--relay-url', url, '--relay-tenant', 'acme']), url).toContain(
        'must start with https:// (or wss://; http:// or ws:// only for localhost or 127.0.0.1)',
      );
  });

  it('reaches the stream at wss and the enrolment at https, whichever scheme was given', () => {
    for (const url of ['https://relay.example.org', 'wss://relay.example.org/']) {
      expect(relayStreamUrl(url, 'acme')).toBe('wss://relay.example.org/v1/stream/acme');
      expect(relayHttpUrl(url, '/v1/org/acme/enrol')).toBe(
        'https://relay.example.org/v1/org/acme/enrol',
      );
    }
  });
});
