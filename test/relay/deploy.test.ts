/**
 * deploy/relay/: the files an IT department runs the relay with. Docker cannot run here (no
 * engine), so the image is proven by what can be checked without one: every file the relay's build
 * reads is inside a COPY of the Dockerfile's build stage and let in by .dockerignore; the build
 * stage's steps run in a folder holding exactly what its COPY lines and its `npm ci` (the lockfile's
 * packages for the relay workspace) put there; and the relay starts from a folder holding exactly
 * what the final stage's COPY lines take (the bundle, no node_modules). The compose file is read by
 * docker-compose's own validation where it is installed (CI installs it), the systemd unit by
 * `systemd-analyze verify`, and the example config is started as it is.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { EXAMPLE_SECRET } from '../../src-relay/config.ts';
import { loadConfig } from '../../src-relay/config-env.ts';
import { useTempDir } from '../support/temp-dir.ts';
import { NODE, RELAY } from '../../rigs/processes.ts';
import { runRelayCli, spawnRelay } from '../../rigs/relay/relay-process.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const deploy = join(root, 'deploy/relay');
const yaml = createRequire(import.meta.url)('js-yaml') as { load(text: string): unknown };

/** The files a module loads through relative imports, itself included (repo-relative paths). */
function importClosure(entry: string): string[] {
  const seen = new Set<string>();
  const todo = [resolve(root, entry)];
  while (todo.length > 0) {
    const file = todo.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g))
      todo.push(resolve(dirname(file), m[1]!));
  }
  return [...seen].map((f) => relative(root, f)).sort();
}

interface Copy {
  /** The stage copied from (`--from=<stage>`), or undefined for the build context. */
  from?: string;
  sources: string[];
  dest: string;
}

interface Stage {
  name?: string;
  copies: Copy[];
  runs: string[];
  workdir: string;
  env: string;
  cmd?: string[];
}

/** Each stage of a Dockerfile: its COPY and RUN lines, WORKDIR, first ENV and CMD. */
function stages(dockerfile: string): Stage[] {
  const text = dockerfile.replace(/\\\n/g, ' ');
  return text
    .split(/^FROM /m)
    .slice(1)
    .map((body) => {
      const copies: Copy[] = [];
      for (const m of body.matchAll(/^COPY (?:--from=(\S+) )?(.+)$/gm)) {
        const parts = m[2]!.trim().split(/\s+/);
        copies.push({ from: m[1], sources: parts.slice(0, -1), dest: parts[parts.length - 1]! });
      }
      const cmd = /^CMD (\[.+\])$/m.exec(body)?.[1];
      return {
        name: / AS (\S+)/.exec(body.split('\n')[0]!)?.[1],
        copies,
        runs: [...body.matchAll(/^RUN (.+)$/gm)].map((m) => m[1]!.trim()),
        workdir: /^WORKDIR (\S+)/m.exec(body)![1]!,
        env: /^ENV (.+)$/m.exec(body)?.[1] ?? '',
        cmd: cmd ? (JSON.parse(cmd) as string[]) : undefined,
      };
    });
}

/**
 * The package folders `npm ci --workspace=<workspace>` installs, from the lockfile alone: the
 * workspace's dependencies and development dependencies, and theirs, found as npm finds them (the
 * nearest node_modules up the tree), optional ones for this platform only.
 */
function workspaceInstall(workspace: string): string[] {
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
    packages: Record<
      string,
      {
        dependencies?: Record<string, string>;
        devDependencies?: Record<string, string>;
        optionalDependencies?: Record<string, string>;
        os?: string[];
        cpu?: string[];
      }
    >;
  };
  const pkgs = lock.packages;
  const found = new Set<string>();
  const resolveFrom = (from: string, name: string): string | undefined => {
    for (let dir = from; ;) {
      const path = `${dir ? `${dir}/` : ''}node_modules/${name}`;
      if (pkgs[path]) return path;
      if (!dir) return undefined;
      const up = dir.lastIndexOf('/node_modules/');
      dir = up >= 0 ? dir.slice(0, up) : '';
    }
  };
  const visit = (from: string, deps: Record<string, string>, optional: Set<string>) => {
    for (const name of Object.keys(deps)) {
      const path = resolveFrom(from, name);
      if (!path) {
        if (optional.has(name)) continue;
        throw new Error(`package-lock.json: ${name} (needed by ${from}) is not in the lockfile`);
      }
      const pkg = pkgs[path]!;
      if (pkg.os && !pkg.os.includes(process.platform)) continue;
      if (pkg.cpu && !pkg.cpu.includes(process.arch)) continue;
      if (found.has(path)) continue;
      found.add(path);
      visit(
        path,
        { ...pkg.dependencies, ...pkg.optionalDependencies },
        new Set(Object.keys(pkg.optionalDependencies ?? {})),
      );
    }
  };
  const ws = pkgs[workspace]!;
  visit(workspace, { ...ws.dependencies, ...ws.devDependencies }, new Set());
  return [...found].sort();
}

/** .dockerignore in its allow-list form: `*`, then `!path` for each path let in. */
function allowedByDockerignore(): string[] {
  const lines = readFileSync(join(root, '.dockerignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  expect(lines[0], '.dockerignore starts by leaving everything out').toBe('*');
  for (const l of lines.slice(1)) expect(l.startsWith('!'), `.dockerignore: ${l}`).toBe(true);
  return lines.slice(1).map((l) => l.slice(1).replace(/\/$/, ''));
}

const within = (file: string, folder: string) =>
  file === folder.replace(/\/$/, '') || file.startsWith(folder.replace(/\/?$/, '/'));

const scriptsOf = (file: string) =>
  (JSON.parse(readFileSync(join(root, file), 'utf8')) as { scripts: Record<string, string> })
    .scripts;

describe('how the relay is started (image, unit, npm scripts)', () => {
  const dockerfile = readFileSync(join(deploy, 'Dockerfile'), 'utf8');
  const unit = readFileSync(join(deploy, 'screenpop-relay.service'), 'utf8');
  const rootScripts = scriptsOf('package.json');
  const workspace = scriptsOf('src-relay/package.json');

  it('starts with the same young-generation size wherever it is started', () => {
    const flag = /--max-semi-space-size=\d+/;
    const found = [
      /^ENV NODE_OPTIONS=(.+)$/m.exec(dockerfile)?.[1],
      /^Environment=NODE_OPTIONS=(.+)$/m.exec(unit)?.[1],
      rootScripts.relay,
      rootScripts['relay:dev'],
      workspace.start,
      workspace['start:dev'],
    ].map((text) => flag.exec(text ?? '')?.[0]);
    expect(found[0]).toMatch(flag);
    expect(new Set(found)).toEqual(new Set([found[0]]));
  });

  // Issue 24: the relay ran from its TypeScript sources everywhere, ~40 MiB of resident memory
  // for the type stripper before the first client.
  it('runs the bundle everywhere it ships, built first where npm starts it; the dev scripts run the sources', () => {
    expect(stages(dockerfile).at(-1)!.cmd).toEqual(['node', RELAY]);
    for (const line of ['ExecStartPre', 'ExecStart'])
      expect(new RegExp(`^${line}=\\S+ (\\S+)`, 'm').exec(unit)?.[1]).toBe(
        `/opt/screenpop/${RELAY}`,
      );
    expect(rootScripts.relay).toMatch(new RegExp(` ${RELAY.replace('.', '\\.')}$`));
    expect(rootScripts.prerelay).toBe('node scripts/build-relay.ts --if-stale');
    expect(rootScripts['build:relay']).toBe('node scripts/build-relay.ts');
    expect(workspace.start).toMatch(new RegExp(` \\.\\./${RELAY.replace('.', '\\.')}$`));
    expect(workspace.prestart).toBe('node ../scripts/build-relay.ts --if-stale');
    expect(rootScripts['relay:dev']).toMatch(/ src-relay\/cli\.ts$/);
    expect(workspace['start:dev']).toMatch(/ cli\.ts$/);
  });
});

describe('the relay image (deploy/relay/Dockerfile)', () => {
  const dockerfile = readFileSync(join(deploy, 'Dockerfile'), 'utf8');
  const [build, final] = stages(dockerfile) as [Stage, Stage];
  const tmp = useTempDir('relay-image-');

  it('has a build stage and a final stage; each COPY source exists and is in the build context', () => {
    expect(stages(dockerfile)).toHaveLength(2);
    expect(build.name).toBe('build');
    const allowed = allowedByDockerignore();
    const fromContext = [...build.copies, ...final.copies].filter((c) => !c.from);
    for (const source of fromContext.flatMap((c) => c.sources)) {
      expect(existsSync(join(root, source)), `COPY ${source}: no such file`).toBe(true);
      expect(
        allowed.some((a) => within(source.replace(/\/$/, ''), a)),
        `COPY ${source} is left out of the build context by .dockerignore`,
      ).toBe(true);
    }
    // The build stage: the lockfile and the two manifests npm ci --workspace needs, then the build.
    expect(build.copies[0]!.sources).toEqual(['package.json', 'package-lock.json']);
    expect(build.copies[1]!.sources).toEqual(['src-relay/package.json']);
    expect(build.runs).toEqual([
      'npm ci --workspace=@screenpop/relay --ignore-scripts --no-audit --no-fund',
      'node scripts/build-relay.ts',
    ]);
    // The final stage: the bundle from the build stage, the example config, nothing else.
    expect(final.copies.filter((c) => c.from)).toEqual([
      { from: 'build', sources: [`/app/${RELAY.split('/')[0]}/`], dest: `${RELAY.split('/')[0]}/` },
    ]);
    expect(final.copies.filter((c) => !c.from).flatMap((c) => c.sources)).toEqual([
      'deploy/relay/relay.json',
    ]);
  });

  it("copies into the build stage every file the build reads (the relay's and the build's sources)", () => {
    const sources = build.copies.flatMap((c) => c.sources);
    const missing = [
      ...importClosure('scripts/build-relay.ts'),
      ...importClosure('src-relay/cli.ts'),
    ].filter((file) => !sources.some((s) => within(file, s)));
    expect(
      missing,
      'the build reads these files, which the build stage of deploy/relay/Dockerfile does not COPY: add them (and to .dockerignore)',
    ).toEqual([]);
  });

  // Issue 20, item 10: the image ran a memory store without a snapshot, so every restart sent
  // every desktop a gap notice. (No engine here: the lines are checked, not run.)
  it("keeps a memory store's snapshot in a folder of the relay's user", () => {
    expect(final.env).toMatch(/RELAY_SNAPSHOT_FILE=\/var\/lib\/screenpop-relay\/snapshot\.json/);
    const last = dockerfile
      .replace(/\\\n/g, ' ')
      .split(/^FROM /m)
      .at(-1)!;
    const made = last.search(
      /^RUN install -d -o node -g node -m 0750 \/var\/lib\/screenpop-relay$/m,
    );
    expect(made, 'a RUN line creates the folder for the user node').toBeGreaterThan(0);
    expect(made).toBeLessThan(last.search(/^USER node$/m));
    expect(last).toMatch(/^VOLUME \/var\/lib\/screenpop-relay$/m);
  });

  it('builds from exactly what the build stage holds, and starts from the bundle alone', async () => {
    /** Copies each COPY line's sources from `from` into the stage's tree under `tree`. */
    const copyInto = (tree: string, stage: Stage, from: (c: Copy) => string) => {
      const at = (dest: string) =>
        dest.startsWith('/') ? join(tree, dest) : join(tree, stage.workdir, dest);
      for (const copy of stage.copies)
        for (const source of copy.sources) {
          const origin = join(from(copy), source);
          const target = copy.dest.endsWith('/')
            ? statSync(origin).isDirectory()
              ? at(copy.dest)
              : join(at(copy.dest), source.split('/').pop()!)
            : at(copy.dest);
          mkdirSync(dirname(target), { recursive: true });
          cpSync(origin, target, { recursive: true });
        }
      return at('.');
    };
    // The build stage: its COPY lines, and node_modules as its `npm ci --workspace` fills it (the
    // lockfile's packages for the relay workspace, copied from this checkout's install). A library
    // the bundle needs that the workspace does not list fails the build here, as in the image.
    const buildTree = join(tmp.path, 'build');
    const buildDir = copyInto(buildTree, build, () => root);
    for (const pkg of workspaceInstall('src-relay'))
      cpSync(join(root, pkg), join(buildDir, pkg), { recursive: true });
    const [node, script] = build.runs[1]!.split(' ');
    expect(node).toBe('node');
    const made = spawnSync(NODE, [script!], { cwd: buildDir, encoding: 'utf8' });
    expect(made.stderr).toMatch(/screenpop-relay built: dist-relay\/screenpop-relay\.cjs/);
    expect(made.status).toBe(0);

    // The image: the final stage's COPY lines (the bundle from the build stage), no node_modules.
    const image = join(tmp.path, 'image');
    const app = copyInto(image, final, (c) => (c.from ? buildTree : root));
    expect(existsSync(join(app, 'node_modules'))).toBe(false);
    const config = join(image, 'etc/screenpop-relay/relay.json');
    expect(final.env).toMatch(/RELAY_CONFIG=\/etc\/screenpop-relay\/relay\.json/);
    expect(final.env).toMatch(/RELAY_HOST=0\.0\.0\.0/);
    const env = { ...process.env, RELAY_CONFIG: config, RELAY_HOST: '0.0.0.0' };

    // As the image starts without a config of the organisation's: it refuses, and says why.
    const refused = await runRelayCli([], { cwd: app, env });
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/relay: cannot start: the config cannot be used/);
    expect(refused.err).toMatch(/tenants\.acme\.secrets holds the example secret/);
    expect(refused.err).not.toContain(EXAMPLE_SECRET);

    // With the tenant's secret (as a mounted config or the environment would give it), it serves.
    const relay = await spawnRelay({
      cwd: app,
      env: { RELAY_CONFIG: config, RELAY_TENANT_ACME_SECRETS: 'whsec-from-the-admin-console' },
    });
    try {
      const health = await fetch(`${relay.url}/healthz`);
      expect(health.status).toBe(200);
      expect((await fetch(`${relay.url}/readyz`)).status).toBe(200);
    } finally {
      expect((await relay.stop()).code).toBe(0);
    }
  }, 60_000);
});

describe('the example config (deploy/relay/relay.json)', () => {
  const file = join(deploy, 'relay.json');

  it('passes --check-config as it is, with a warning about its example secret', async () => {
    const r = await runRelayCli(['--check-config', '--config', file]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/listen: http:\/\/127\.0\.0\.1:8787/);
    expect(r.out).toMatch(/tenant acme: https:\/\/acme\.pbx\.example, 1 webhook secret/);
    expect(r.out).toMatch(/warning: tenants\.acme\.secrets holds the example secret/);
    expect(r.out).toMatch(/config OK \(1 warning\): the relay would start/);
    expect(r.out + r.err).not.toContain(EXAMPLE_SECRET);
  });

  it('starts with npm run relay -- --config <it> (on a free port) and stops cleanly', async () => {
    const relay = await spawnRelay({ configFile: file, env: { RELAY_PORT: '0' } });
    try {
      expect(relay.stdout()).toMatch(
        /relay listening on http:\/\/127\.0\.0\.1:\d+ \(storage: memory\)/,
      );
      expect((await fetch(`${relay.url}/healthz`)).status).toBe(200);
      const warnings = relay.logLines().filter((l) => l.msg === 'config warning');
      expect(warnings).toHaveLength(1);
    } finally {
      expect((await relay.stop()).code).toBe(0);
    }
  });

  it('is refused beyond this computer while it holds the example secret', async () => {
    const r = await runRelayCli(['--check-config', '--config', file], {
      env: { ...process.env, RELAY_HOST: '0.0.0.0' },
    });
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/error: tenants\.acme\.secrets holds the example secret/);
    expect(r.out).toMatch(/config NOT OK \(1 error\): the relay would not start/);
  });
});

describe('the compose file (deploy/relay/compose.yaml)', () => {
  const text = readFileSync(join(deploy, 'compose.yaml'), 'utf8');
  const compose = yaml.load(text) as {
    services: Record<string, Record<string, unknown>>;
  };

  it('runs two relay instances from the Dockerfile on one durable Redis', () => {
    const { services } = compose;
    expect(Object.keys(services).sort()).toEqual(['redis', 'relay-1', 'relay-2']);
    const redis = services.redis!;
    expect(redis.command).toEqual(expect.arrayContaining(['--appendonly', 'yes']));
    expect(redis.command).toEqual(expect.arrayContaining(['--appendfsync', 'always']));
    const ports = new Set<string>();
    for (const name of ['relay-1', 'relay-2']) {
      const s = services[name] as {
        build: { context: string; dockerfile: string };
        environment: Record<string, string>;
        volumes: string[];
        ports: string[];
        depends_on: Record<string, unknown>;
      };
      const context = resolve(deploy, s.build.context);
      expect(context).toBe(resolve(root));
      expect(existsSync(join(context, s.build.dockerfile))).toBe(true);
      expect(new URL(s.environment.RELAY_REDIS_URL!).hostname).toBe('redis');
      expect(s.depends_on).toHaveProperty('redis');
      for (const v of s.volumes) {
        const [source, target] = v.split(':');
        expect(existsSync(resolve(deploy, source!)), `volume source ${source}`).toBe(true);
        expect(target).toBe('/etc/screenpop-relay/relay.json');
      }
      for (const p of s.ports) ports.add(p.split(':').slice(0, -1).join(':'));
    }
    expect(ports.size, 'each instance on its own host port').toBe(2);
  });

  const composeBin = ['/usr/bin/docker-compose', '/usr/local/bin/docker-compose'].find((p) =>
    existsSync(p),
  );
  if (!composeBin && process.env.CI === 'true')
    throw new Error('docker-compose is not installed; CI must install it (.ci/run)');
  if (!composeBin) console.warn('compose validation skipped: apt-get install docker-compose');

  it.runIf(composeBin)(
    'passes docker-compose config (the compose schema, no engine needed)',
    () => {
      const r = spawnSync(composeBin!, ['-f', join(deploy, 'compose.yaml'), 'config', '-q'], {
        encoding: 'utf8',
        cwd: deploy,
      });
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
    },
  );
});

describe('the compose file with Sentinel (deploy/relay/compose.sentinel.yaml)', () => {
  const compose = yaml.load(readFileSync(join(deploy, 'compose.sentinel.yaml'), 'utf8')) as {
    services: Record<string, { command?: string[]; environment?: Record<string, string> }>;
  };

  it('runs two relays on a primary, two replicas and three sentinels that the relays ask', () => {
    const { services } = compose;
    expect(Object.keys(services).sort()).toEqual([
      'redis-1',
      'redis-2',
      'redis-3',
      'relay-1',
      'relay-2',
      'sentinel-1',
      'sentinel-2',
      'sentinel-3',
    ]);
    for (const name of ['redis-1', 'redis-2', 'redis-3']) {
      const command = services[name]!.command!;
      expect(command).toEqual(expect.arrayContaining(['--appendfsync', 'always']));
      expect(command.join(' ')).toContain(`--replica-announce-ip ${name}`);
    }
    expect(services['redis-2']!.command!.join(' ')).toContain('--replicaof redis-1 6379');
    const script = services['sentinel-1']!.command!.join(' ');
    expect(script).toContain('sentinel monitor relay redis-1 6379 2');
    for (const name of ['relay-1', 'relay-2']) {
      // The relay's own config reading of the environment the file gives.
      const storage = loadConfig(join(deploy, 'relay.json'), services[name]!.environment!).storage;
      expect(storage).toMatchObject({
        kind: 'redis',
        sentinel: {
          name: 'relay',
          nodes: ['sentinel-1:26379', 'sentinel-2:26379', 'sentinel-3:26379'],
        },
        minReplicas: 1,
      });
      for (const node of (storage as { sentinel: { nodes: string[] } }).sentinel.nodes)
        expect(services).toHaveProperty(node.split(':')[0]!);
    }
  });

  const composeBin = ['/usr/bin/docker-compose', '/usr/local/bin/docker-compose'].find((p) =>
    existsSync(p),
  );
  it.runIf(composeBin)('passes docker-compose config', () => {
    const r = spawnSync(
      composeBin!,
      ['-f', join(deploy, 'compose.sentinel.yaml'), 'config', '-q'],
      {
        encoding: 'utf8',
        cwd: deploy,
      },
    );
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });
});

describe('the systemd unit (deploy/relay/screenpop-relay.service)', () => {
  const unit = readFileSync(join(deploy, 'screenpop-relay.service'), 'utf8');
  const tmp = useTempDir('relay-unit-');
  const analyze = ['/usr/bin/systemd-analyze', '/bin/systemd-analyze'].find((p) => existsSync(p));
  if (!analyze && process.env.CI === 'true')
    throw new Error('systemd-analyze is not installed; CI must install systemd (.ci/run)');
  if (!analyze) console.warn('systemd unit verification skipped: systemd-analyze not installed');

  /** The unit as it would be on this machine: this checkout for /opt/screenpop, this Node. */
  const localUnit = (configDir: string) =>
    unit
      .replaceAll('/usr/bin/node', process.execPath)
      .replaceAll('/opt/screenpop', root.replace(/\/$/, ''))
      .replaceAll('/etc/screenpop-relay', configDir)
      .replace(/^User=.*$/m, `User=${userInfo().username}`)
      .replace(/^Group=.*$/m, '');

  it.runIf(analyze)('passes systemd-analyze verify without a warning', () => {
    const file = join(tmp.path, 'screenpop-relay.service');
    writeFileSync(file, localUnit(tmp.path));
    const r = spawnSync(analyze!, ['verify', file], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it.runIf(analyze)(
    'with the Sentinel drop-in (screenpop-relay.service.d/sentinel.conf): passes systemd-analyze verify, and gives the relay the sentinels',
    () => {
      const dir = join(tmp.path, 'sentinel');
      mkdirSync(join(dir, 'screenpop-relay.service.d'), { recursive: true });
      writeFileSync(join(dir, 'screenpop-relay.service'), localUnit(tmp.path));
      const dropIn = readFileSync(join(deploy, 'screenpop-relay.service.d/sentinel.conf'), 'utf8');
      writeFileSync(join(dir, 'screenpop-relay.service.d/sentinel.conf'), dropIn);
      const r = spawnSync(analyze!, ['verify', join(dir, 'screenpop-relay.service')], {
        encoding: 'utf8',
      });
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      const env = Object.fromEntries(
        [...dropIn.matchAll(/^Environment=(\w+)=(.*)$/gm)].map((m) => [m[1]!, m[2]!]),
      );
      expect(loadConfig(join(deploy, 'relay.json'), env).storage).toMatchObject({
        kind: 'redis',
        sentinel: {
          name: 'relay',
          nodes: expect.arrayContaining([expect.stringMatching(/:26379$/)]),
        },
        minReplicas: 1,
      });
    },
  );

  // Issue 20, item 10: with the example config (memory, no snapshotFile) every restart started
  // the store empty and sent every desktop a gap notice (1,000 of 1,000 in 5 restarts).
  it("keeps the memory store's snapshot in its state folder (written when the relay stops)", async () => {
    const state = join(tmp.path, 'state');
    mkdirSync(state);
    const env = Object.fromEntries(
      [
        ...localUnit(tmp.path)
          .replaceAll('/var/lib/screenpop-relay', state)
          .matchAll(/^Environment=(\w+)=(.*)$/gm),
      ].map((m) => [m[1]!, m[2]!]),
    );
    expect(env.RELAY_SNAPSHOT_FILE).toBe(join(state, 'snapshot.json'));
    const file = join(deploy, 'relay.json');
    const check = await runRelayCli(['--check-config', '--config', file], {
      env: { ...process.env, ...env },
    });
    expect(check.out).toContain(`storage: memory, snapshot ${join(state, 'snapshot.json')}`);
    const relay = await spawnRelay({ configFile: file, env });
    expect((await relay.stop()).code).toBe(0);
    expect(existsSync(join(state, 'snapshot.json'))).toBe(true);
  });

  it('runs the config check before the relay, with the same config', async () => {
    const pre = /^ExecStartPre=(.+)$/m.exec(unit)![1]!.split(' ');
    const start = /^ExecStart=(.+)$/m.exec(unit)![1]!.split(' ');
    expect(pre).toEqual([...start.slice(0, 2), '--check-config', ...start.slice(2)]);
    expect(unit).toMatch(/^LimitNOFILE=65536$/m);
    // The check command as the unit runs it, against the example config installed as documented.
    cpSync(join(deploy, 'relay.json'), join(tmp.path, 'relay.json'));
    const args = localUnit(tmp.path)
      .match(/^ExecStartPre=(.+)$/m)![1]!
      .split(' ')
      .slice(2);
    const r = await runRelayCli(args, { cwd: root });
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/config OK/);
  });
});
