/**
 * Whether this computer's policy may be believed. A policy applies to every user of the computer
 * (its locks, its `onRing` programs, its relay address), so it is honoured only from a file that no
 * ordinary user could have written or replaced. On macOS and Linux that is the rule sudo applies to
 * sudoers and sshd (StrictModes) to authorized_keys: the file, and every folder above it up to `/`,
 * owned by root and writable by no other user (group-writable only for group 0). A policy that
 * fails it is ignored with a log line saying why (policy.ts).
 *
 * Windows has its own rule on the file's and folder's ACL (windows-acl.ts), with the same
 * `PolicyTrust` shape.
 */
import { realpath, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

/** What the rule looks at in a file's or folder's status. */
export interface Ownership {
  uid: number;
  gid: number;
  mode: number;
}

/**
 * Why the policy file at `path` (whose opened descriptor's status is `file`) may not be trusted,
 * or null when it may. Never throws: a folder that cannot be looked at is a reason too.
 */
export type PolicyTrust = (path: string, file: Ownership) => Promise<string | null>;

/** Why `info` could be written by someone other than root, or null. */
export function writableByOthers(what: string, info: Ownership): string | null {
  if (info.uid !== 0) return `${what} is owned by user ${info.uid}, not by root`;
  if ((info.mode & 0o002) !== 0) return `${what} is writable by every user`;
  if ((info.mode & 0o020) !== 0 && info.gid !== 0)
    return `${what} is writable by group ${info.gid}`;
  return null;
}

/** `folder` and each folder above it, up to the root. */
function upToRoot(folder: string): string[] {
  const out = [folder];
  for (let up = dirname(folder); up !== out.at(-1); up = dirname(up)) out.push(up);
  return out;
}

export interface PosixTrustDeps {
  stat?: (path: string) => Promise<Ownership>;
  realpath?: (path: string) => Promise<string>;
}

/** The POSIX rule: the file and every folder above it (as named, and where a link leads). */
export function posixPolicyTrust(deps: PosixTrustDeps = {}): PolicyTrust {
  const statOf = deps.stat ?? stat;
  const real = deps.realpath ?? realpath;
  return async (path, file) => {
    const own = writableByOthers(`the policy file ${path}`, file);
    if (own) return own;
    let folders: Set<string>;
    try {
      // A link on the way (the file or a folder) is judged where it is and where it leads: a
      // root-owned link into a folder anyone may write is no better than the folder.
      const named = resolve(path);
      folders = new Set([...upToRoot(dirname(named)), ...upToRoot(dirname(await real(named)))]);
    } catch (err) {
      return `the folders above ${path} cannot be looked at (${(err as NodeJS.ErrnoException).code ?? 'error'})`;
    }
    for (const folder of folders) {
      let info: Ownership;
      try {
        info = await statOf(folder);
      } catch (err) {
        return `the folder ${folder} cannot be looked at (${(err as NodeJS.ErrnoException).code ?? 'error'})`;
      }
      const problem = writableByOthers(`the folder ${folder}`, info);
      if (problem) return problem;
    }
    return null;
  };
}
