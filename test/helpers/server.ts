/**
 * A real server on port 0 with its own temp data dir, for HTTP tests.
 * `api()` sends JSON with a bearer token and returns status + parsed body.
 */
import { loadConfig } from '../../server/config';
import { startServer, type RunningServer, type StartOptions } from '../../server/main';
import { createLogger } from '../../server/lib/log';
import { createUploads, type UploadsService } from '../../server/uploads';
import { tempDir } from './tools';
import { databaseUrl } from './test-database';

export const ADMIN = { email: 'admin@example.test', password: 'admin-password-1' };

export interface TestServer {
  url: string;
  server: RunningServer;
  dataDir: string;
  /** Signs in and returns the bearer token. */
  login(email?: string, password?: string): Promise<string>;
  api<T = any>(
    method: string,
    path: string,
    opts?: { token?: string; body?: unknown; headers?: Record<string, string>; raw?: BodyInit },
  ): Promise<{ status: number; body: T; headers: Headers }>;
  close(): Promise<void>;
}

export async function startTestServer(env: Record<string, string> = {}, opts: Omit<StartOptions, 'logger'> = {}): Promise<TestServer> {
  const { dir, cleanup } = tempDir('filedock-srv-');
  const dbUrl = await databaseUrl(env.SERVICE_DATA_DIR ?? dir);
  const config = loadConfig({
    ...(dbUrl ? { SERVICE_DATABASE_URL: dbUrl } : {}),
    SERVICE_DATA_DIR: dir,
    SERVICE_PORT: '0',
    SERVICE_HOST: '127.0.0.1',
    SERVICE_ADMIN_EMAIL: ADMIN.email,
    SERVICE_ADMIN_PASSWORD: ADMIN.password,
    SERVICE_UPDATE_CHECK: '0',
    // The test runner's lower password cost (scripts/test.mjs); child servers inherit it with the environment.
    ...(process.env.SERVICE_PASSWORD_COST ? { SERVICE_PASSWORD_COST: process.env.SERVICE_PASSWORD_COST } : {}),
    ...env,
  });
  const server = await startServer(config, { ...opts, logger: createLogger((process.env.TEST_LOG_LEVEL as 'debug') ?? 'error') });
  const url = `http://127.0.0.1:${server.port}`;
  const api: TestServer['api'] = async (method, path, o = {}) => {
    const headers: Record<string, string> = { ...(o.headers ?? {}) };
    if (o.token) headers.authorization = `Bearer ${o.token}`;
    let body: BodyInit | undefined = o.raw;
    if (o.body !== undefined) {
      headers['content-type'] ??= 'application/json';
      body = typeof o.body === 'string' ? o.body : JSON.stringify(o.body);
    }
    const res = await fetch(url + path, { method, headers, body, redirect: 'manual' });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      /* not JSON */
    }
    return { status: res.status, body: parsed as never, headers: res.headers };
  };
  return {
    url,
    server,
    dataDir: dir,
    api,
    async login(email = ADMIN.email, password = ADMIN.password) {
      const r = await api('POST', '/api/auth/login', { body: { email, password } });
      if (r.status !== 200) throw new Error(`login failed: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body.token as string;
    },
    async close() {
      await server.close();
      cleanup();
    },
  };
}

/** Polls an op until it completes, fails or is cancelled (10 s), and returns its view. */
export async function waitForOp(s: TestServer, token: string, id: string): Promise<any> {
  for (let i = 0; i < 400; i++) {
    const r = await s.api('GET', `/api/files/ops/${id}`, { token });
    if (['completed', 'failed', 'cancelled'].includes(r.body.status)) return r.body;
    await new Promise((res) => setTimeout(res, 25));
  }
  throw new Error(`op ${id} did not finish`);
}

/** Uploads one file into `folder` through the multipart form route; asserts a 200. */
export async function uploadFile(s: TestServer, token: string, folder: string, name: string, bytes: Buffer): Promise<void> {
  const form = new FormData();
  form.append('path', folder);
  form.append('file', new Blob([new Uint8Array(bytes)]), name);
  const r = await fetch(`${s.url}/api/files/upload`, { method: 'POST', body: form, headers: { authorization: `Bearer ${token}` } });
  if (r.status !== 200) throw new Error(`upload of ${name} failed: ${r.status} ${await r.text()}`);
}

/** The audit rows of `action`, once there are at least `want` of them (audit is written after the answer) or after 5 s. */
export async function auditRows(s: TestServer, token: string, action: string, want: number): Promise<any[]> {
  const until = Date.now() + 5000;
  for (;;) {
    const rows = (await s.api('GET', `/api/admin/audit?action=${action}`, { token })).body.events;
    if (rows.length >= want || Date.now() > until) return rows;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Another instance's uploads service on the test server's database and staging folder (its own instance id
 * and a 60 s lease), to run the hourly sweep or the recovery at start now.
 */
export const otherInstanceUploads = (s: TestServer, instanceId: string, maxChunkBytes = 1024 * 1024): UploadsService =>
  createUploads({
    db: s.server.db,
    files: s.server.files,
    catalogue: s.server.catalogue,
    auth: s.server.auth,
    stagingDir: s.server.dirs.staging,
    limits: { maxUploadBytes: 0, maxChunkBytes, sessionTtlMs: 60_000 },
    lease: { instanceId, leaseMs: 60_000 },
  });
