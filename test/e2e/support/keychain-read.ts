/**
 * Run by the e2e suite inside its desktop session: prints, as one JSON line, every entry the OS
 * keychain holds for the service the app uses, so the test sees what the app stored there.
 */
import keytar from 'keytar';
import { KEYCHAIN_SERVICE } from '../../../src-main/core/credentials/credential-store.ts';

const entries = await keytar.findCredentials(KEYCHAIN_SERVICE);
process.stdout.write(`${JSON.stringify(entries)}\n`);
