/**
 * Issue 32's first rule: with one tenant nothing changes in any answer. The
 * tenants migration gave 61 tables a `tenant_id` column, and a repository that
 * selects whole rows would hand it to the API. Every GET route without a path
 * parameter (from /api/openapi.json), called as the admin after some of each
 * kind of thing exists (bare, and with a folder's and a file's `?path=`), must answer without a `tenant_id` field anywhere.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';

/** Where in a JSON value a `tenant_id` key sits (paths like `events[0].tenant_id`), at most `limit`. */
function tenantFields(v: unknown, at = '', out: string[] = [], limit = 5): string[] {
  if (out.length >= limit || v === null || typeof v !== 'object') return out;
  if (Array.isArray(v)) v.forEach((x, i) => tenantFields(x, `${at}[${i}]`, out, limit));
  else
    for (const [k, x] of Object.entries(v)) {
      if (k === 'tenant_id') out.push(`${at}.${k}`);
      tenantFields(x, `${at}.${k}`, out, limit);
    }
  return out;
}

describe('single-tenant mode: no API answer carries tenant_id', () => {
  let s: TestServer;
  let admin: string;
  let cleanup: () => void;
  before(async () => {
    const t = tempDir('filedock-tenant-fields-');
    cleanup = t.cleanup;
    mkdirSync(join(t.dir, 'docs'));
    writeFileSync(join(t.dir, 'docs/a.txt'), 'hello tenant');
    s = await startTestServer();
    admin = await s.login();
    const made = await s.api('POST', '/api/admin/storages', {
      token: admin,
      body: { rbac_enabled: false, name: 'Box', driver: 'local', config: { path: t.dir } },
    });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    // Some rows of many kinds: a share link and a drop, a folder, a trashed file, an op, a notification.
    assert.equal((await s.api('POST', '/api/files/share', { token: admin, body: { path: '/Box/docs/a.txt' } })).status, 200);
    assert.equal((await s.api('POST', '/api/files/share', { token: admin, body: { path: '/Box/docs', kind: 'drop' } })).status, 200);
    assert.equal((await s.api('POST', '/api/files/mkdir', { token: admin, body: { path: '/Box/new' } })).status, 200);
    await s.api('POST', '/api/files/copy', { token: admin, body: { paths: ['/Box/docs/a.txt'], to: '/Box/new' } });
    await s.api('POST', '/api/files/delete', { token: admin, body: { paths: ['/Box/new'] } });
  });
  after(async () => {
    await s?.close();
    cleanup?.();
  });

  test('every parameterless GET route', async () => {
    const doc = await (await fetch(`${s.url}/api/openapi.json`)).json();
    const routes = Object.entries(doc.paths as Record<string, Record<string, unknown>>)
      .filter(([path, ops]) => 'get' in ops && !path.includes('{'))
      .map(([path]) => path);
    assert.ok(routes.length > 50, `routes: ${routes.length}`);
    const leaks: string[] = [];
    let answered = 0;
    // Bare, and with a folder or a file for the routes that take `?path=`.
    const calls = routes.flatMap((r) => [r, `${r}?path=${encodeURIComponent('/Box/docs')}`, `${r}?path=${encodeURIComponent('/Box/docs/a.txt')}`]);
    for (const path of calls) {
      const r = await fetch(`${s.url}${path}`, { headers: { authorization: `Bearer ${admin}` }, signal: AbortSignal.timeout(30_000) });
      // Event streams, files and pages are not rows.
      if (!(r.headers.get('content-type') ?? '').startsWith('application/json')) {
        await r.body?.cancel();
        continue;
      }
      const body = await r.json();
      if (r.ok) answered++;
      for (const at of tenantFields(body, '', [], 1)) leaks.push(`${path} → ${at}`);
    }
    assert.ok(answered > 40, `JSON answers: ${answered}`);
    assert.deepEqual(leaks, []);
  });
});
