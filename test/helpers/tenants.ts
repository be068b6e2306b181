/**
 * Multi-tenant tests (docs/tenants.md): requests that reach the test server by another host name (fetch
 * cannot set `Host`, so this speaks node:http), and a tenant added straight to the database (the tenant
 * routes' own test makes them through the API).
 */
import { request } from 'node:http';
import type { TestServer } from './server';

export interface HostAnswer<T = any> {
  status: number;
  body: T;
  /** The `service_session` cookie the answer set, if any (`name=value`). */
  cookie?: string;
}

/** An answer as `onHost` gives it: with its bytes and headers too, for what is no JSON (pages, images). */
export interface HostReply<T = any> extends HostAnswer<T> {
  bytes: Buffer;
  headers: Record<string, string | string[] | undefined>;
}

/**
 * `s.api` as if the request came to `host` (its port ignored by the server); `cookie` is sent as is. `raw`
 * is sent as the body instead of JSON, `headers` beside the others.
 */
export function onHost(s: TestServer, host: string) {
  const port = new URL(s.url).port;
  return (
    method: string,
    path: string,
    o: { token?: string; cookie?: string; body?: unknown; raw?: Buffer; headers?: Record<string, string> } = {},
  ): Promise<HostReply> =>
    new Promise((resolve, reject) => {
      const payload = o.raw ?? (o.body === undefined ? undefined : JSON.stringify(o.body));
      const headers: Record<string, string> = { host: `${host}:${port}`, ...o.headers };
      if (o.token) headers.authorization = `Bearer ${o.token}`;
      if (o.cookie) headers.cookie = o.cookie;
      if (payload !== undefined) {
        headers['content-type'] ??= 'application/json';
        // node:http sends a DELETE's body without a length (no chunking by default for it): the server would read it as the next request.
        headers['content-length'] = String(Buffer.byteLength(payload));
      }
      const req = request({ host: '127.0.0.1', port, method, path, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const bytes = Buffer.concat(chunks);
          const text = bytes.toString('utf8');
          let body: unknown = text;
          try {
            body = text ? JSON.parse(text) : null;
          } catch {
            /* not JSON */
          }
          const cookie = (res.headers['set-cookie'] ?? []).map((c) => c.split(';')[0]).find((c) => c.startsWith('service_session=') && c.length > 16);
          resolve({ status: res.statusCode ?? 0, body, cookie, bytes, headers: res.headers });
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(payload);
    });
}

/** Adds a tenant with `slug` and `hostnames` in the database, has the server read its tenants again, and answers its id. */
export async function addTenantRow(s: TestServer, slug: string, hostnames: string[]): Promise<number> {
  await s.server.db.async.sql('INSERT INTO tenants (slug, name, hostnames, created_at) VALUES (?, ?, ?, ?)', [
    slug,
    slug,
    JSON.stringify(hostnames),
    new Date().toISOString(),
  ]);
  const [row] = await s.server.db.async.sql<{ id: number | string }>('SELECT id FROM tenants WHERE slug = ?', [slug]);
  await s.server.services.tenants!.changed();
  return Number(row.id);
}
