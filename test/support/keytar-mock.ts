/**
 * keytar for the composition-root tests on the electron mock: an in-memory keychain (the OS
 * keychain is the far side of a wire there). Used as
 * `vi.mock('keytar', () => import('../support/keytar-mock.ts'))`; a test reads what was stored
 * through `keychain` (`<service>/<account>` -> secret), imported from this file.
 */
export const keychain = new Map<string, string>();

export async function getPassword(service: string, account: string): Promise<string | null> {
  return keychain.get(`${service}/${account}`) ?? null;
}

export async function setPassword(service: string, account: string, password: string) {
  keychain.set(`${service}/${account}`, password);
}

export async function deletePassword(service: string, account: string): Promise<boolean> {
  return keychain.delete(`${service}/${account}`);
}

export default { getPassword, setPassword, deletePassword };
