/**
 * Run by keytar-store.test.ts inside a private D-Bus session with its own gnome-keyring: exercises
 * KeytarCredentialStore against the real Secret Service and prints one JSON line of what it saw.
 * Argument: the account name to use.
 */
import { KeytarCredentialStore } from '../../src-main/core/credentials/keytar-store.ts';

const account = process.argv[2] ?? 'k3y@acme.example.com';
const secret = process.env.SCREENPOP_TEST_SECRET ?? 'test-secret';
const store = new KeytarCredentialStore();
const out: Record<string, unknown> = {};
try {
  out.before = await store.getSecret(account);
  await store.setSecret(account, secret);
  out.afterSet = await store.getSecret(account);
  await store.setSecret(account, `${secret}-2`);
  out.afterOverwrite = await store.getSecret(account);
  out.otherAccount = await store.getSecret(`other-${account}`);
  out.deleted = await store.deleteSecret(account);
  out.afterDelete = await store.getSecret(account);
  out.deletedAgain = await store.deleteSecret(account);
} catch (err) {
  out.error = { name: (err as Error).name, message: (err as Error).message };
}
process.stdout.write(JSON.stringify(out) + '\n');
