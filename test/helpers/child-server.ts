/**
 * `service serve` from source in a child process, on port 0, with a data
 * folder the caller owns, so a test can kill it (SIGKILL: a crash) and start
 * it again on the same data.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { tempDir } from './tools';
import { databaseUrl } from './test-database';
import { join } from 'node:path';

const root = new URL('../..', import.meta.url).pathname;

/**
 * Node arguments that run `service …`: the build (dist/server/cli.js) when the runner found it newer than
 * the sources (TEST_BUILT=1, scripts/test.mjs: a boot then costs ~2 s of CPU instead of ~5 through tsx),
 * else the runner's compiled tree when it runs from one (TEST_COMPILED=1, scripts/test-compile.mjs), else the
 * sources through tsx. Relative to the repository root (the children's cwd).
 */
const fromBuild = process.env.TEST_BUILT === '1';
const fromSource: readonly string[] =
  process.env.TEST_COMPILED === '1' ? ['--enable-source-maps', '.test-build/server/cli/main.js'] : ['--import', 'tsx', 'server/cli/main.ts'];
export const SERVICE_CLI: readonly string[] = fromBuild ? ['dist/server/cli.js'] : fromSource;

export interface ChildServer {
  url: string;
  child: ChildProcess;
  /** Everything the server printed so far. */
  log(): string;
  /** Every host-protocol message the server sent so far (docs/server-host-protocol.md). */
  messages(): Array<{ type: string; [k: string]: unknown }>;
  /** Kills at once (a crash: no drain, no cleanup). */
  kill(): Promise<void>;
  /** Graceful stop (SIGTERM), then SIGKILL after 5 s. */
  stop(): Promise<void>;
}

/**
 * Starts the server with `env` over a quiet default (loopback, port 0, no update check); resolves once it listens.
 * `built`: the bundle `node scripts/build.mjs` wrote (dist/server/cli.js), as installed, whatever SERVICE_CLI says.
 */
export async function spawnServer(env: Record<string, string>, o: { built?: boolean } = {}): Promise<ChildServer> {
  const built = o.built || fromBuild;
  // Node's flags, then the entry module.
  const node = built ? ['dist/server/cli.js'] : fromSource;
  const child = fork(join(root, node.at(-1)!), ['serve'], {
    execArgv: node.slice(0, -1),
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    env: { ...process.env, SERVICE_PORT: '0', SERVICE_HOST: '127.0.0.1', SERVICE_UPDATE_CHECK: '0', ...env },
  });
  let log = '';
  const messages: Array<{ type: string }> = [];
  child.on('message', (m: { type: string }) => messages.push(m));
  child.stdout!.on('data', (b) => (log += b));
  child.stderr!.on('data', (b) => (log += b));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const url = await new Promise<string>((resolve, reject) => {
    // A server that never got ready is killed here: the caller has no handle to stop it with.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not start in 120 s:\n${log}`));
    }, 120_000);
    child.on('message', (m: { type?: string; port?: number }) => {
      if (m?.type !== 'ready') return;
      clearTimeout(timer);
      resolve(`http://127.0.0.1:${m.port}`);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${log}`));
    });
  });
  const end = async (signal: NodeJS.Signals, graceMs: number) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill(signal);
    await Promise.race([exited, new Promise((r) => setTimeout(r, graceMs))]);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  return { url, child, log: () => log, messages: () => messages, kill: () => end('SIGKILL', 0), stop: () => end('SIGTERM', 5000) };
}

/** A JSON call to the server at `base` (several servers: the caller picks one per call). */
export async function callJson(base: string, method: string, path: string, token?: string, body?: unknown): Promise<{ status: number; body: any }> {
  const r = await fetch(base + path, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : null };
}

export const CHILD_ADMIN = { email: 'admin@example.test', password: 'admin-password-1' };

/** JSON calls as the signed-in admin; `raw` sends bytes as application/octet-stream. */
/**
 * The environment of one of several instances on one PostgreSQL database: the shared key file, its own data
 * folder, the admin of `CHILD_ADMIN` and a local storage `Files` at `files` (seeded by the first to start).
 */
export function instanceEnv(o: { url: string; keyFile: string; dataDir: string; files: string }, extra: Record<string, string> = {}): Record<string, string> {
  return {
    SERVICE_DATABASE_URL: o.url,
    SERVICE_SECRET_KEY_FILE: o.keyFile,
    SERVICE_DATA_DIR: o.dataDir,
    SERVICE_ADMIN_EMAIL: CHILD_ADMIN.email,
    SERVICE_ADMIN_PASSWORD: CHILD_ADMIN.password,
    SERVICE_DEFAULT_STORAGE_DRIVER: 'local',
    SERVICE_DEFAULT_STORAGE_PATH: o.files,
    SERVICE_DEFAULT_STORAGE_NAME: 'Files',
    SERVICE_LOG_LEVEL: 'info',
    ...extra,
  };
}

export type ChildApi = (method: string, path: string, body?: unknown, raw?: Buffer) => Promise<{ status: number; body: any }>;

/**
 * A server on the data folder `data` (kill it and boot again on the same
 * folder: a crash and a restart), signed in as its first-run admin.
 */
export async function bootSignedIn(data: string, env: Record<string, string> = {}, o: { built?: boolean } = {}): Promise<{ srv: ChildServer; api: ChildApi }> {
  if (o.built && !existsSync(join(root, 'dist/server/cli.js'))) throw new Error('run `node scripts/build.mjs` first: this test starts the built service');
  // Under TEST_DATABASE=postgres the data folder's own database (the same one again on a restart), unless the test names one.
  const pg = env.SERVICE_DATABASE_URL ? undefined : await databaseUrl(data);
  const srv = await spawnServer(
    {
      SERVICE_DATA_DIR: data,
      SERVICE_ADMIN_EMAIL: CHILD_ADMIN.email,
      SERVICE_ADMIN_PASSWORD: CHILD_ADMIN.password,
      ...(pg && { SERVICE_DATABASE_URL: pg }),
      ...env,
    },
    o,
  );
  const login = await (
    await fetch(`${srv.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(CHILD_ADMIN) })
  ).json();
  const api: ChildApi = async (method, path, body, raw) => {
    const headers: Record<string, string> = { authorization: `Bearer ${login.token}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (raw) headers['content-type'] = 'application/octet-stream';
    const res = await fetch(srv.url + path, { method, headers, body: raw ? new Uint8Array(raw) : body === undefined ? undefined : JSON.stringify(body) }).catch(
      (e: Error) => {
        // A call that fails on the wire says what the server was doing: a crash shows its exit and its last words.
        const state = srv.child.exitCode !== null || srv.child.signalCode !== null ? `exited (${srv.child.exitCode ?? srv.child.signalCode})` : 'running';
        throw new Error(`${method} ${path}: ${e.message} (${(e.cause as Error)?.message}); server ${state}, its log ends:\n${srv.log().slice(-4000)}`, {
          cause: e,
        });
      },
    );
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };
  return { srv, api };
}

/** A data folder and two storage folders `a` and `b` (created) in a fresh temp dir. */
export function crashFolders(prefix: string): { dir: string; data: string; a: string; b: string; cleanup: () => void } {
  const t = tempDir(prefix);
  const [a, b] = [join(t.dir, 'a'), join(t.dir, 'b')];
  mkdirSync(a);
  mkdirSync(b);
  return { dir: t.dir, data: join(t.dir, 'data'), a, b, cleanup: t.cleanup };
}

/** Adds a polled local storage per name → folder, failing the test on a refusal. */
export async function addLocalStorages(api: ChildApi, folders: Record<string, string>): Promise<void> {
  for (const [name, path] of Object.entries(folders)) {
    const r = await api('POST', '/api/admin/storages', { name, driver: 'local', config: { path }, sync_mode: 'poll' });
    if (r.status !== 200) throw new Error(`storage ${name}: ${r.status} ${JSON.stringify(r.body)}`);
  }
}
