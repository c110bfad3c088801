/**
 * The fake HubSpot (test/support/fake-hubspot.ts) in a process of its own, for bench/crm-lookup.ts:
 * a real HubSpot is on another machine, so its TLS and JSON work must not share the measured
 * process's event loop. Reads its certificate, contacts and delay from a JSON file named by the
 * first argument, prints its URL on stdout, and runs until killed.
 */
import { readFileSync } from 'node:fs';
import { startFakeHubSpot } from '../rigs/fake-hubspot.ts';

const config = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as {
  certFile: string;
  keyFile: string;
  token: string;
  delayMs: number;
  contacts: Array<Record<string, string>>;
  /** bench/crm-log.ts: the token may write calls too. */
  writes?: boolean;
};
const hubspot = await startFakeHubSpot({
  cert: readFileSync(config.certFile),
  key: readFileSync(config.keyFile),
  tokens: {
    [config.token]: [
      'crm.objects.contacts.read',
      ...(config.writes ? ['crm.objects.contacts.write'] : []),
    ],
  },
  // bench/crm-log.ts measures the queue's throughput, not HubSpot's 10-second limit.
  writesPerTenSeconds: 1_000_000,
  // Latency is measured here, not HubSpot's per-second limit (the tests do that).
  searchPerSecond: 1_000,
});
hubspot.delayMs = config.delayMs;
for (const c of config.contacts) hubspot.addContact(c);
process.stdout.write(`${hubspot.url}\n`);
process.on('SIGTERM', () => void hubspot.close().then(() => process.exit(0)));
