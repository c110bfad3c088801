import { homedir } from 'node:os';
import { join } from 'node:path';

/** Where the runner's call-log queue lives unless --crm-log-folder names another folder (README). */
export function defaultCallLogFolder(): string {
  return join(homedir(), '.local', 'state', 'screenpop-headless', 'call-log');
}
