import { parseArgs } from 'node:util';
import { systemClock } from '../../src-shared/process/clock.ts';
import { silentLogger } from '../../src-shared/process/log.ts';
import {
  isExtensionNumber,
  isInternationalDid,
  MAX_EXTENSION_DIGITS,
} from '../../src-shared/rules/phone-number-rules.ts';
import { relayEnrolPath } from '../../src-shared/relay/relay-protocol.ts';
import type { RelayConfig } from '../config.ts';
import { hasUserTenants, openUserStore } from './open-user-store.ts';
import { readCodeKey } from './code-key.ts';
import { codeHash, newEnrolmentCode } from './secrets.ts';
import { USER_NAME, type UserStore } from './types.ts';
import { canonicalEmail, sameEmail } from '../../src-shared/rules/email-address.ts';

export const USERS_USAGE = `usage: npm run relay -- users <command> [-c relay.json] [--tenant <name>]

  add <name> --extension <n> [--extension <n> ...] [--did <number> ...] [--email <address>]
                        adds a user (their extensions and the numbers that reach them) and
                        prints a one-time enrolment code for their first device; a --did is
                        the full international number (+44 20 7946 0000), matched exactly
  code <name>           a one-time code for another device of the user
  revoke <name>         ends every device and sign-in of the user at once (open sessions are
                        closed within a second or two); "add" gives them a fresh start
  revoke <address>      the same for an e-mail address that signs in with single sign-on, however
                        it is mapped (a user's --email, oidc.users, the phone system's list)
  list [--json]         the users, their extensions and enrolled devices

  --tenant <name>       the tenant (needed when more than one has "access": "users")
  --code-ttl <time>     how long a new code stays valid: 30m, 12h, 3d (default 72h, at most 30d)

The users are kept where the relay's config says (users.file, or Redis with the redis storage);
the running relay sees each change at once. A code is shown once and stored only as its
HMAC-SHA-256 under the key of users.codeKeyFile or users.codeKeyEnv (without one: its SHA-256).`;

const MAX_TTL_MS = 30 * 24 * 3600_000;

export class UsersUsageError extends Error {}

/** "72h" / "30m" / "3d" as milliseconds. */
export function parseDuration(text: string): number {
  const m = /^(\d{1,6})\s*([mhd])$/.exec(text.trim());
  if (!m) throw new UsersUsageError(`--code-ttl ${text}: write a time such as 30m, 12h or 3d`);
  const ms = Number(m[1]) * { m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as 'm' | 'h' | 'd'];
  if (ms <= 0 || ms > MAX_TTL_MS)
    throw new UsersUsageError(`--code-ttl ${text}: between 1m and 30d`);
  return ms;
}

/**
 * `relay users ...`: the administrator's commands for organisation mode. Prints to `out`;
 * returns the exit code (0 done, 1 refused, 2 usage).
 */
export async function usersCommand(
  argv: string[],
  config: RelayConfig,
  out: (line: string) => void,
  now: () => number = () => Date.now(),
  open: (config: RelayConfig) => Promise<UserStore | null> = (c) =>
    openUserStore(c, systemClock, silentLogger, { follow: false }),
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      extension: { type: 'string', multiple: true },
      did: { type: 'string', multiple: true },
      email: { type: 'string' },
      tenant: { type: 'string' },
      'code-ttl': { type: 'string' },
      json: { type: 'boolean', default: false },
    },
    allowPositionals: true,
    strict: true,
  });
  const [command, name, ...extra] = positionals;
  if (extra.length > 0) throw new UsersUsageError(`unexpected ${extra.join(' ')}`);
  if (!hasUserTenants(config))
    throw new UsersUsageError(
      'no tenant of this config has "access": "users" (set it on the tenant, with users.file or the redis storage)',
    );
  const tenant = pickTenant(config, values.tenant);
  const ttl = parseDuration(values['code-ttl'] ?? '72h');
  const needName = () => {
    if (!name || !USER_NAME.test(name))
      throw new UsersUsageError(
        `${command} needs a user name: letters, digits and @ . _ + - (up to 128), e.g. alice`,
      );
    return name;
  };
  if (command !== 'add' && (values.extension || values.did || values.email))
    throw new UsersUsageError('--extension, --did and --email go with "add"');
  let users: UserStore | null = null;
  const issue = async (user: string) => {
    const code = newEnrolmentCode();
    await users!.issueCode(
      tenant,
      user,
      codeHash(code, readCodeKey(config.users, env)),
      ttl,
      now(),
    );
    out(`enrolment code: ${code}`);
    out(
      `  one device, valid until ${new Date(now() + ttl).toISOString().replace(/\.\d+Z$/, 'Z')}; it is shown only now`,
    );
    out(
      `  runner:  screenpop-headless --relay-url <https://this relay> --relay-tenant ${tenant} --enrol-file <a file holding the code>  (or --enrol - to read it from standard input; add --credential-file <path> on a server without a keychain)`,
    );
    out(`  desktop: Settings > Connection > Sign in with your organisation > enrolment code`);
    out(
      `  (the device posts it to ${relayEnrolPath(tenant)} and keeps the credential it gets in its keychain)`,
    );
  };
  switch (command) {
    case 'add': {
      const user = needName();
      const extensions = values.extension ?? [];
      if (extensions.length === 0)
        throw new UsersUsageError(
          'add needs at least one --extension (the user’s extension number)',
        );
      for (const e of extensions)
        if (!isExtensionNumber(e))
          throw new UsersUsageError(
            `--extension ${e}: an extension is 1 to ${MAX_EXTENSION_DIGITS} digits, e.g. 101`,
          );
      const dids = values.did ?? [];
      for (const d of dids)
        if (!isInternationalDid(d))
          throw new UsersUsageError(
            `--did ${d}: write the number in full international form, + and the country code, e.g. +44 20 7946 0000 (it is matched exactly; a short number would not reach this user)`,
          );
      const email = values.email?.trim() ?? null;
      // The one rule of what an address is (src-shared/rules/email-address.ts), as sign-ins are compared.
      if (email !== null && canonicalEmail(email) === null)
        throw new UsersUsageError(
          `--email ${email}: an e-mail address, e.g. alice@example.org, with an ASCII local part and in NFC (the relay never folds Unicode: a look-alike such as the Kelvin sign would be another address)`,
        );
      users = await open(config);
      try {
        await users!.addUser(
          {
            tenant,
            name: user,
            extensions: [...new Set(extensions)],
            dids: [...new Set(dids.map((d) => d.trim()))],
            email,
          },
          now(),
        );
        out(
          `user ${user} added to tenant ${tenant}: extensions ${extensions.join(', ')}${dids.length ? `; numbers ${dids.join(', ')}` : ''}${email ? `; signs in as ${email}` : ''}`,
        );
        await issue(user);
      } finally {
        await users!.close();
      }
      return 0;
    }
    case 'code': {
      const user = needName();
      users = await open(config);
      try {
        await issue(user);
      } finally {
        await users!.close();
      }
      return 0;
    }
    case 'revoke': {
      // A user's name, or an e-mail address that signs in (however it is mapped: 2.3).
      // Any word with an @ (as typed: revokeAddress compares it by emailKey, even one that is
      // not an address sign-ins could carry).
      const typed = name?.trim();
      const address = typed?.includes('@') && !/\s/.test(typed) ? typed : null;
      const user = address ?? needName();
      users = await open(config);
      try {
        if (await users!.revoke(tenant, user, now())) {
          out(`user ${user} revoked: every device and sign-in of theirs is refused from now on`);
          return 0;
        }
        const oidc = config.tenants[tenant]!.oidc;
        if (address === null || !oidc) {
          out(`no user ${user} in tenant ${tenant} (relay users list shows them)`);
          return 1;
        }
        const names = await users!.revokeAddress(tenant, address, now());
        out(
          `${address} revoked (${names.join(', ')}): every device and sign-in with this address is refused from now on`,
        );
        if (Object.keys(oidc.users).some((e) => sameEmail(e, address)))
          out(
            `  oidc.users in the config still maps it: remove it there too (the revocation is checked first)`,
          );
      } finally {
        await users!.close();
      }
      return 0;
    }
    case 'list': {
      users = await open(config);
      try {
        const all = await users!.list(tenant);
        if (values.json) out(JSON.stringify(all));
        else if (all.length === 0)
          out(`tenant ${tenant} has no users yet ("relay users add" adds one)`);
        else
          for (const { user, devices } of all)
            out(
              `${user.name}\t${user.revokedAt !== null ? 'REVOKED' : 'active'}\textensions ${user.extensions.join(',')}${user.dids.length ? `\tnumbers ${user.dids.join(',')}` : ''}${user.email ? `\t${user.email}` : ''}\t${devices.length} device${devices.length === 1 ? '' : 's'}${devices.map((d) => ` [${d.id} ${JSON.stringify(d.label)}]`).join('')}`,
            );
      } finally {
        await users!.close();
      }
      return 0;
    }
    default:
      throw new UsersUsageError(command ? `unknown command ${command}` : 'which command?');
  }
}

function pickTenant(config: RelayConfig, asked: string | undefined): string {
  const names = Object.keys(config.tenants).filter((n) => config.tenants[n]!.access === 'users');
  if (asked !== undefined) {
    if (!names.includes(asked))
      throw new UsersUsageError(
        `--tenant ${asked}: not a tenant with "access": "users" (${names.join(', ')})`,
      );
    return asked;
  }
  if (names.length > 1)
    throw new UsersUsageError(
      `more than one tenant has users: say which with --tenant (${names.join(', ')})`,
    );
  return names[0]!;
}
