/**
 * The core's words in the user's language, through the public functions that produce them: a
 * fault's reason and remedy, a status that comes from one of several connections, Test
 * connection's answer, the runner's status line; and, in the pseudo-locale, that every one of
 * them comes from the catalogue (no plain ASCII letter left outside the values).
 */
import { describe, expect, it } from 'vitest';
import { testConnection } from '../../src-main/core/connection/test-connection.ts';
import { combineStatuses, saidStatus } from '../../src-main/core/events/status.ts';
import { statusLine } from '../../src-main/headless/output.ts';
import { fixedTranslator } from '../../src-shared/i18n/locale-state.ts';
import { phrase, render } from '../../src-shared/i18n/phrase.ts';
import { createTranslator } from '../../src-shared/i18n/translator.ts';
import { silentLogger } from '../../src-shared/process/log.ts';
import {
  describeError,
  ServiceError,
  type FaultId,
  type ServiceErrorKind,
} from '../../src-shared/api/service-errors.ts';

const KINDS: ServiceErrorKind[] = [
  'credentials',
  'expired',
  'scope',
  'ip',
  'rate-limit',
  'server',
  'network',
  'timeout',
  'bad-request',
  'protocol',
  'proxy',
  'certificate',
];
const FAULTS: FaultId[] = [
  'no-credentials',
  'keychain-unreadable',
  'proxy-unreachable',
  'proxy-dropped',
  'proxy-timeout',
  'proxy-auth',
  'certificate-expired',
  'certificate-host',
  'unknown-errcode',
];
const VALUES = { host: 'acme.example.com', proxy: 'proxy.example.com:3128' };

/** Every fault the core can describe, as thrown errors (and one plain Error: "unexpected"). */
const errors = [
  ...KINDS.map((kind) => new ServiceError({ kind, message: 'x', values: VALUES })),
  ...FAULTS.map(
    (fault) =>
      new ServiceError({ kind: 'server', fault, message: 'x', errcode: 77, values: VALUES }),
  ),
  new Error('a bug'),
];

describe('the core in other languages', () => {
  it('says a fault in German and Arabic, keeping English for logs and JSON', () => {
    const fault = describeError(new ServiceError({ kind: 'network', message: 'ECONNREFUSED' }));
    expect(fault.reason).toBe('The service cannot be reached.');
    expect(render(fault.words.reason, createTranslator('de'))).toBe(
      'Der Dienst ist nicht erreichbar.',
    );
    expect(render(fault.words.remedy, createTranslator('ar'))).toMatch(/^تحقّق من اتصال الشبكة/);
  });

  it('names which connection a combined status comes from, in the language', () => {
    const combined = combineStatuses([
      { name: 'direct', status: saidStatus('connected', [phrase('status.connecting')]) },
      { name: 'relay', status: saidStatus('offline', [phrase('status.relay-dropped')]) },
    ]);
    expect(combined.reason).toBe('relay: The relay connection dropped; reconnecting.');
    expect(render(combined.words!.reason!, createTranslator('fr', { isolate: false }))).toBe(
      'Relais : La connexion au relais est tombée ; reconnexion.',
    );
  });

  it('answers Test connection in French, with the address to allow for a 10004', async () => {
    const result = await testConnection(
      {
        baseUrl: 'https://acme.example.com',
        apiKey: 'k',
        secret: 's',
        extensions: ['101'],
        defaultRegion: 'FR',
      },
      {
        createProbe: () => ({
          getToken: () =>
            Promise.reject(
              new ServiceError({
                kind: 'ip',
                errcode: 10004,
                message: 'IP 198.51.100.23 NOT ALLOWED',
              }),
            ),
          listExtensions: async () => [],
        }),
        logger: silentLogger,
        words: fixedTranslator('fr', { isolate: false }),
      },
    );
    expect(result.message).toBe(
      'L’adresse IP de cet ordinateur ne figure pas dans la liste autorisée de la clé API. ' +
        'L’adresse de cet ordinateur, telle que le service la voit, est 198.51.100.23.',
    );
    expect(result.remedy).toMatch(/^Dans la console d’administration/);
    expect(result.ipToAllow).toBe('198.51.100.23');
  });

  it("the runner's status line says its words in the runner's language; keys and codes stay", () => {
    const s = saidStatus('needs-attention', [phrase('status.relay-no-tenant')], undefined, 10003);
    const es = statusLine(s, createTranslator('es', { isolate: false }));
    expect(es).toEqual({
      type: 'status',
      state: 'needs-attention',
      reason: 'El relé no da servicio a este inquilino.',
      remedy: null,
      errcode: 10003,
    });
    expect(statusLine(s).reason).toBe('The relay does not serve this tenant.');
  });

  it('in the pseudo-locale, every fault word comes from the catalogue', () => {
    const pseudo = createTranslator('en-XA');
    const leftovers = errors.flatMap((error) => {
      const { words } = describeError(error);
      return [render(words.reason, pseudo), render(words.remedy, pseudo)]
        .map((text) => text.replace(/\u2068[^\u2069]*\u2069/g, ''))
        .filter((text) => /[A-Za-z]/.test(text));
    });
    expect(leftovers).toEqual([]);
  });
});
