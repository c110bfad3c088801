/**
 * The relay is its own npm workspace (src-relay/package.json), so a relay install or container
 * gets only what the relay loads, and the desktop app never ships the relay's libraries.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runtimePackages } from '../support/runtime-imports.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const json = (path: string) =>
  JSON.parse(readFileSync(`${root}${path}`, 'utf8')) as {
    name: string;
    workspaces?: string[];
    dependencies?: Record<string, string>;
    optionalDependencies?: Record<string, string>;
    devDependencies?: Record<string, string>;
  };

describe('the relay package', () => {
  it('lists exactly the packages the relay loads at run time', async () => {
    const relay = json('src-relay/package.json');
    const loaded = await runtimePackages('src-relay/cli.ts');
    expect(loaded).toContain('ioredis');
    // Optional: kerberos (native, proxy authentication by Negotiate; the relay runs without it).
    expect(Object.keys({ ...relay.dependencies, ...relay.optionalDependencies }).sort()).toEqual(
      loaded,
    );
  });

  it('is a workspace of the repository, and its libraries are not the desktop app’s', async () => {
    const desktop = json('package.json');
    const relay = json('src-relay/package.json');
    expect(desktop.workspaces).toEqual(['src-relay']);
    const desktopDeps = Object.keys(desktop.dependencies ?? {});
    const relayOnly = Object.keys(relay.dependencies ?? {}).filter(
      (name) => !desktopDeps.includes(name) && !(name in (desktop.devDependencies ?? {})),
    );
    expect(relayOnly).toContain('ioredis');
    expect(desktopDeps).not.toContain('ioredis');
  });
});
