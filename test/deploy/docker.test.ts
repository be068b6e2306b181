/**
 * The Dockerfile and the compose file, kept true without building an image
 * (no image registry is reachable here): every path the Dockerfile copies and
 * every command it runs exists in the repository or in the bundle
 * (scripts/bundle-layout.json, which dist:server enforces), every setting they
 * pass is one server/config knows with a value it accepts, the compose file
 * builds this Dockerfile and mounts its volume, and the health check command
 * itself answers 0 against a real started server (1 once it is gone).
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import YAML from 'yaml';
import { SETTINGS } from '../../server/config';
import { spawnServer, type ChildServer } from '../helpers/child-server';
import { tempDir } from '../helpers/tools';

const root = resolve(new URL('../..', import.meta.url).pathname);
const read = (p: string) => readFileSync(join(root, p), 'utf8');
const layout = JSON.parse(read('scripts/bundle-layout.json')) as { name: string; paths: string[] };
const pkg = JSON.parse(read('package.json')) as { version: string; scripts: Record<string, string> };
/** Where the final stage puts the bundle. */
const INSTALL = '/opt/filedock';
/** Absolute commands outside the bundle, and the Debian package that must be installed for each. */
const FROM_APT: Record<string, string> = { '/usr/bin/tini': 'tini' };

interface Instruction {
  op: string;
  args: string;
}
interface Stage {
  name: string | null;
  base: string;
  steps: Instruction[];
}

/** Dockerfile instructions by stage (comments dropped, continuation lines joined). */
function parseDockerfile(text: string): Stage[] {
  const stages: Stage[] = [];
  const joined = text
    .split('\n')
    .filter((l) => !/^\s*#/.test(l))
    .join('\n')
    .replace(/\\\n/g, ' ');
  for (const line of joined
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)) {
    const [, op, args] = /^(\S+)\s+(.*)$/.exec(line)!;
    if (op.toUpperCase() === 'FROM') {
      const [, base, name] = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args)!;
      stages.push({ name: name ?? null, base, steps: [] });
    } else stages.at(-1)!.steps.push({ op: op.toUpperCase(), args: args.replace(/\s+/g, ' ') });
  }
  return stages;
}

const dockerfile = parseDockerfile(read('Dockerfile'));
const final = dockerfile.at(-1)!;
const stepsOf = (s: Stage, op: string) => s.steps.filter((i) => i.op === op).map((i) => i.args);
/** `KEY=value KEY2=value2` of ENV instructions. */
const envOf = (s: Stage) => Object.fromEntries(stepsOf(s, 'ENV').flatMap((a) => a.split(' ').map((kv) => kv.split('=') as [string, string])));
const healthCmd = (() => {
  const [h] = stepsOf(final, 'HEALTHCHECK');
  return JSON.parse(h.slice(h.indexOf('CMD ') + 4)) as string[];
})();

/** Fails unless every setting is one server/config knows and its value (with `${VAR}` filled in) parses. */
function assertSettings(env: Record<string, string>, where: string): void {
  const byKey = new Map(Object.values(SETTINGS).map((s) => [s.key, s]));
  for (const [key, value] of Object.entries(env)) {
    const setting = byKey.get(key);
    assert.ok(setting, `${where}: ${key} is not a setting of server/config`);
    const r = (setting.parse as (raw: string) => { ok: boolean; reason?: string })(String(value).replace(/\$\{\w+\}/g, 'x'));
    assert.ok(r.ok, `${where}: ${key}=${value}: ${r.reason}`);
  }
}

/** True when a .dockerignore pattern keeps `path` (a repository path) out of the build context. */
function ignored(path: string): boolean {
  const patterns = read('.dockerignore')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  return patterns.some((p) => {
    const re = new RegExp(`^${p.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')}(/|$)`);
    return re.test(path) || (!p.includes('/') && path.split('/').some((seg) => re.test(seg)));
  });
}

/** A path the final stage runs, mapped into the bundle: fails unless the bundle has it or an installed package does. */
function assertRunnable(path: string, where: string): void {
  if (path.startsWith(`${INSTALL}/`)) {
    assert.ok(layout.paths.includes(path.slice(INSTALL.length + 1)), `${where}: ${path} is not in the bundle (scripts/bundle-layout.json)`);
    return;
  }
  const apt = FROM_APT[path];
  assert.ok(apt, `${where}: ${path} is neither in the bundle nor a known package's`);
  assert.ok(
    stepsOf(final, 'RUN').some((r) => new RegExp(`apt-get install [^&]*\\b${apt}\\b`).test(r)),
    `${where}: ${path} needs apt package ${apt}`,
  );
}

describe('Dockerfile', () => {
  test('stage 1 builds the bundle from repository files the context keeps', () => {
    const [build] = dockerfile;
    assert.equal(dockerfile.length, 2);
    for (const copy of stepsOf(build, 'COPY')) {
      const sources = copy
        .split(' ')
        .filter((a) => !a.startsWith('--'))
        .slice(0, -1);
      for (const s of sources) assert.ok(existsSync(join(root, s)), `COPY ${s}: not in the repository`);
    }
    const run = stepsOf(build, 'RUN').join(' && ');
    const npmRuns = [...run.matchAll(/npm run (\S+)/g)].map((m) => m[1]);
    assert.deepEqual(npmRuns, ['dist:server']);
    const script = /node (\S+)/.exec(pkg.scripts['dist:server'])![1];
    // What npm install and the build read, and the build context must carry.
    for (const input of [
      'package.json',
      'package-lock.json',
      'tsconfig.json',
      script,
      'scripts/build.mjs',
      'scripts/bundle-layout.json',
      'server/cli/main.ts',
      'renderer/vite.config.ts',
    ]) {
      assert.ok(existsSync(join(root, input)), `${input} missing`);
      assert.ok(!ignored(input), `.dockerignore leaves out ${input}`);
    }
    for (const local of ['node_modules', 'dist', 'release', 'resources/docker/secrets']) assert.ok(ignored(local), `.dockerignore must leave out ${local}`);
    const [, glob, into] = /tar -xzf (\S+) -C (\S+) --strip-components=1/.exec(run)!;
    const archive = `release/${layout.name.replace('{version}', pkg.version).replace('{os}', 'linux').replace('{arch}', 'x64')}.tar.gz`;
    assert.match(archive, new RegExp(`^${glob.replace(/[.]/g, '\\.').replace(/\*/g, '[^/]*')}$`), 'the tar pattern matches the bundle dist:server writes');
    assert.deepEqual(stepsOf(final, 'COPY'), [`--from=${build.name} ${into} ${INSTALL}`]);
  });

  test('the final stage runs the bundle as a non-root user with the settings server/config knows', () => {
    const debian = (base: string) => /bookworm|bullseye|trixie/.exec(base)?.[0];
    assert.ok(debian(final.base) && debian(final.base) === debian(dockerfile[0].base), "the Debian release the bundle's Node and addons were built on");
    const [entry] = stepsOf(final, 'ENTRYPOINT').map((e) => JSON.parse(e) as string[]);
    assertRunnable(entry[0], 'ENTRYPOINT');
    const service = entry.find((a) => a.startsWith(`${INSTALL}/`))!;
    assertRunnable(service, 'ENTRYPOINT');
    const [cmd] = stepsOf(final, 'CMD').map((c) => JSON.parse(c) as string[]);
    assert.deepEqual(cmd, ['serve']);
    assert.match(read('server/cli/main.ts'), /case 'serve':/);
    assertRunnable(healthCmd[0], 'HEALTHCHECK');

    const env = envOf(final);
    assertSettings(env, 'Dockerfile ENV');
    assert.equal(env.SERVICE_INSTALL_MODE, 'docker', 'a container never replaces itself');
    assert.deepEqual(
      stepsOf(final, 'VOLUME').map((v) => JSON.parse(v)),
      [[env.SERVICE_DATA_DIR]],
    );
    assert.deepEqual(stepsOf(final, 'EXPOSE'), [env.SERVICE_PORT]);
    const [user] = stepsOf(final, 'USER');
    assert.notEqual(user, 'root');
    assert.ok(
      stepsOf(final, 'RUN').some((r) => new RegExp(`useradd [^&]* ${user}( |$)`).test(r)),
      `USER ${user} is created`,
    );
    assert.ok(
      stepsOf(final, 'RUN').some((r) => r.includes(`install -d -o ${user} -g ${user} -m 0750 ${env.SERVICE_DATA_DIR}`)),
      'the data folder belongs to the user',
    );
  });
});

describe('compose file', () => {
  const file = join(root, 'resources/docker/compose.yaml');
  const compose = YAML.parse(readFileSync(file, 'utf8'), { merge: true }) as {
    services: Record<
      string,
      {
        build?: { context: string; dockerfile: string };
        image?: string;
        environment?: Record<string, string>;
        volumes?: string[];
        secrets?: string[];
        healthcheck?: { test: string[] };
        command?: string;
      }
    >;
    volumes: Record<string, unknown>;
    secrets: Record<string, unknown>;
  };
  const built = Object.entries(compose.services).filter(([, s]) => s.build);

  test('builds this Dockerfile and mounts, passes and checks what the image expects', () => {
    assert.ok(built.length >= 2, 'two instances');
    const dataDir = envOf(final).SERVICE_DATA_DIR;
    for (const [name, s] of built) {
      assert.equal(resolve(dirname(file), s.build!.context), root, `${name}: build context`);
      assert.ok(existsSync(join(root, s.build!.dockerfile)), `${name}: ${s.build!.dockerfile}`);
      assertSettings(s.environment ?? {}, `compose ${name}`);
      const mounts = (s.volumes ?? []).map((v) => v.split(':'));
      assert.ok(
        mounts.some(([, target]) => target === dataDir),
        `${name}: a volume on ${dataDir}`,
      );
      for (const [vol, target] of mounts) {
        assert.ok(vol in compose.volumes, `${name}: volume ${vol} declared`);
        if (target !== dataDir)
          assert.ok(
            stepsOf(final, 'RUN').some((r) => r.includes(`-m 0750 ${target}`)),
            `${name}: the image makes ${target} for its user`,
          );
      }
      for (const [key, value] of Object.entries(s.environment ?? {}))
        for (const m of String(value).matchAll(/\/run\/secrets\/(\w+)/g))
          assert.ok(s.secrets?.includes(m[1]) && m[1] in compose.secrets, `${name}: ${key} reads secret ${m[1]}`);
      assert.deepEqual(s.healthcheck?.test, ['CMD', ...healthCmd], `${name}: the image's health check`);
    }
    assert.equal(new Set(built.map(([, s]) => s.image)).size, 1, 'one image for every instance');
    const proxied = [...(compose.services.proxy?.command ?? '').matchAll(/--to (\S+):(\d+)/g)];
    assert.deepEqual(proxied.map((m) => m[1]).sort(), built.map(([n]) => n).sort());
    for (const m of proxied) assert.equal(m[2], envOf(final).SERVICE_PORT);
  });

  test('the docs point at the file instead of carrying a copy', () => {
    const ops = read('docs/operations.md');
    assert.ok(ops.includes('resources/docker/compose.yaml'), 'docs/operations.md points at resources/docker/compose.yaml');
    assert.ok(!/^services:$/m.test(ops), 'docs/operations.md carries no second copy of the compose file');
  });
});

describe('the health check command', () => {
  let srv: ChildServer;
  const data = tempDir();
  before(async () => {
    srv = await spawnServer({ SERVICE_DATA_DIR: data.dir });
  });
  after(async () => {
    await srv?.stop();
    data.cleanup();
  });
  const check = (port: string) =>
    spawnSync(process.execPath, healthCmd.slice(1), { env: { ...process.env, SERVICE_PORT: port }, encoding: 'utf8', timeout: 30_000 });

  test('exits 0 while the server answers /api/health with 200, 1 once it is gone', async () => {
    assert.ok(healthCmd.join(' ').includes('/api/health'));
    const port = new URL(srv.url).port;
    assert.equal((await fetch(`${srv.url}/api/health`)).status, 200);
    assert.equal(check(port).status, 0);
    await srv.stop();
    assert.equal(check(port).status, 1);
  });
});
