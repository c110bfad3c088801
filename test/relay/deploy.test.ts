/**
 * deploy/relay/: the files an IT department runs the relay with. Docker cannot run here (no
 * engine), so the image is proven by what can be checked without one: every file the relay loads
 * is inside a COPY of the Dockerfile and let in by .dockerignore, and the relay starts from a
 * folder holding exactly what those COPY lines put in the image. The compose file is read by
 * docker-compose's own validation where it is installed (CI installs it), the systemd unit by
 * `systemd-analyze verify`, and the example config is started as it is.
 */
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { userInfo } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { EXAMPLE_SECRET } from '../../src-relay/config.ts';
import { useTempDir } from '../support/temp-dir.ts';
import { runRelayCli, spawnRelay } from './relay-process.ts';

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
  sources: string[];
  dest: string;
}

/** The final stage's COPY lines (not those `--from` another stage) and its WORKDIR. */
function finalStage(dockerfile: string): { copies: Copy[]; workdir: string; env: string } {
  const text = dockerfile.replace(/\\\n/g, ' ');
  const stages = text.split(/^FROM /m);
  const last = stages[stages.length - 1]!;
  const copies: Copy[] = [];
  for (const m of last.matchAll(/^COPY (?!--from)(.+)$/gm)) {
    const parts = m[1]!.trim().split(/\s+/);
    copies.push({ sources: parts.slice(0, -1), dest: parts[parts.length - 1]! });
  }
  return {
    copies,
    workdir: /^WORKDIR (\S+)/m.exec(last)![1]!,
    env: /^ENV (.+)$/m.exec(last)![1]!,
  };
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

describe("the relay's Node options", () => {
  it('starts with the same young-generation size wherever it is started (image, unit, npm scripts)', () => {
    const flag = /--max-semi-space-size=\d+/;
    const found = [
      /^ENV NODE_OPTIONS=(.+)$/m.exec(readFileSync(join(deploy, 'Dockerfile'), 'utf8'))?.[1],
      /^Environment=NODE_OPTIONS=(.+)$/m.exec(
        readFileSync(join(deploy, 'screenpop-relay.service'), 'utf8'),
      )?.[1],
      (
        JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
          scripts: Record<string, string>;
        }
      ).scripts.relay,
      (
        JSON.parse(readFileSync(join(root, 'src-relay/package.json'), 'utf8')) as {
          scripts: Record<string, string>;
        }
      ).scripts.start,
    ].map((text) => flag.exec(text ?? '')?.[0]);
    expect(found[0]).toMatch(flag);
    expect(new Set(found)).toEqual(new Set([found[0]]));
  });
});

describe('the relay image (deploy/relay/Dockerfile)', () => {
  const dockerfile = readFileSync(join(deploy, 'Dockerfile'), 'utf8');
  const stage = finalStage(dockerfile);
  const tmp = useTempDir('relay-image-');

  it('copies every file the relay loads, and each COPY source exists and is in the build context', () => {
    const allowed = allowedByDockerignore();
    const sources = stage.copies.flatMap((c) => c.sources);
    for (const source of sources) {
      expect(existsSync(join(root, source)), `COPY ${source}: no such file`).toBe(true);
      expect(
        allowed.some((a) => within(source.replace(/\/$/, ''), a)),
        `COPY ${source} is left out of the build context by .dockerignore`,
      ).toBe(true);
    }
    // The dependency stage: the lockfile and the two manifests npm ci --workspace needs.
    for (const f of ['package.json', 'package-lock.json', 'src-relay/package.json'])
      expect(dockerfile).toMatch(new RegExp(`COPY [^\\n]*${f.replace('.', '\\.')}`));
    expect(dockerfile).toMatch(/npm ci --omit=dev --workspace=@screenpop\/relay/);
    const missing = importClosure('src-relay/cli.ts').filter(
      (file) => !sources.some((s) => within(file, s)),
    );
    expect(
      missing,
      'the relay imports these files, which deploy/relay/Dockerfile does not COPY: add them (and to .dockerignore)',
    ).toEqual([]);
  });

  // Issue 20, item 10: the image ran a memory store without a snapshot, so every restart sent
  // every desktop a gap notice. (No engine here: the lines are checked, not run.)
  it("keeps a memory store's snapshot in a folder of the relay's user", () => {
    expect(stage.env).toMatch(/RELAY_SNAPSHOT_FILE=\/var\/lib\/screenpop-relay\/snapshot\.json/);
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

  it('starts from exactly what the COPY lines put in the image', async () => {
    // The image's tree in a folder: /app (WORKDIR) and /etc, filled by the COPY lines only.
    const image = tmp.path;
    const at = (dest: string) =>
      dest.startsWith('/') ? join(image, dest) : join(image, stage.workdir, dest);
    for (const { sources, dest } of stage.copies)
      for (const source of sources) {
        const target = dest.endsWith('/')
          ? statSync(join(root, source)).isDirectory()
            ? at(dest)
            : join(at(dest), source.split('/').pop()!)
          : at(dest);
        mkdirSync(dirname(target), { recursive: true });
        cpSync(join(root, source), target, { recursive: true });
      }
    // node_modules: the stage before installs the relay workspace's; here, the checkout's.
    symlinkSync(join(root, 'node_modules'), join(at('.'), 'node_modules'));
    const config = at('/etc/screenpop-relay/relay.json');
    expect(stage.env).toMatch(/RELAY_CONFIG=\/etc\/screenpop-relay\/relay\.json/);
    expect(stage.env).toMatch(/RELAY_HOST=0\.0\.0\.0/);
    const env = { ...process.env, RELAY_CONFIG: config, RELAY_HOST: '0.0.0.0' };

    // As the image starts without a config of the organisation's: it refuses, and says why.
    const refused = await runRelayCli([], { cwd: at('.'), env });
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/relay: cannot start: the config cannot be used/);
    expect(refused.err).toMatch(/tenants\.acme\.secrets holds the example secret/);
    expect(refused.err).not.toContain(EXAMPLE_SECRET);

    // With the tenant's secret (as a mounted config or the environment would give it), it serves.
    const relay = await spawnRelay({
      cwd: at('.'),
      env: { RELAY_CONFIG: config, RELAY_TENANT_ACME_SECRETS: 'whsec-from-the-admin-console' },
    });
    try {
      const health = await fetch(`${relay.url}/healthz`);
      expect(health.status).toBe(200);
      expect((await fetch(`${relay.url}/readyz`)).status).toBe(200);
    } finally {
      expect((await relay.stop()).code).toBe(0);
    }
  });
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
