/**
 * A deleted tenant's rows (docs/tenants.md, "Step 4: the leftovers"): the operator suspends and deletes a tenant
 * that has a storage, a link, a webhook and its deliveries, ops, an audit log, a notification, a session and a
 * key; the purge op then leaves no row of it in any scoped table, and another tenant's rows are untouched.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SCOPED } from '../../server/db/tenant-tables';
import { startTestServer, type TestServer } from '../helpers/server';
import { addTenantRow, onHost, type HostAnswer } from '../helpers/tenants';
import { tempDir } from '../helpers/tools';

const ADMIN = { email: 'sam@example.test', password: 'same-password-1' };
let s: TestServer;
const roots: Array<{ dir: string; cleanup: () => void }> = [];

before(async () => {
  s = await startTestServer({ SERVICE_MULTI_TENANT: '1' });
});
after(async () => {
  await s?.close();
  for (const r of roots) r.cleanup();
});

const ok = (r: HostAnswer, what: string) => {
  assert.ok(r.status >= 200 && r.status < 300, `${what}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
};

const until = async (what: string, cond: () => Promise<boolean>, ms = 60_000) => {
  const end = Date.now() + ms;
  while (!(await cond())) {
    assert.ok(Date.now() < end, `waited for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
};

/** The tenant's rows in every scoped table, by table. */
async function rows(id: number): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of SCOPED) {
    const [r] = await s.server.db.async.sql<{ n: number | string }>(`SELECT count(*) AS n FROM ${table} WHERE tenant_id = ?`, [id]);
    out[table] = Number(r.n);
  }
  return out;
}

/** A tenant with an admin, a storage holding a file, a link, a webhook with a delivery, an upload's ops and a notification. */
async function populated(slug: string): Promise<number> {
  const host = `${slug}.example.test`;
  const id = await addTenantRow(s, slug, [host]);
  const admin = await s.server.services.auth.users.create({ tenant_id: id }, { ...ADMIN, role: 'admin' });
  const on = onHost(s, host);
  const token = ok(await on('POST', '/api/auth/login', { body: ADMIN }), `${slug} sign-in`).token as string;
  const root = tempDir(`filedock-purge-${slug}-`);
  roots.push(root);
  writeFileSync(join(root.dir, 'a.txt'), `${slug} text`);
  ok(await on('POST', '/api/admin/storages', { token, body: { name: 'Docs', driver: 'local', rbac_enabled: false, config: { path: root.dir } } }), 'storage');
  ok(await on('POST', '/api/auth/keys', { token, body: { name: `${slug}-key`, verbs: ['files:read'] } }), 'key');
  // The hook's address answers nothing: its delivery stays, failed or retrying, in the tenant's rows.
  ok(await on('POST', '/api/admin/webhooks', { token, body: { url: 'http://127.0.0.1:9/hook', events: ['file.uploaded'] } }), 'webhook');
  const form = new FormData();
  form.append('path', '/Docs');
  form.append('file', new Blob([new TextEncoder().encode('uploaded')]), 'up.txt');
  const up = await fetch(`${s.url}/t/${slug}/api/files/upload`, { method: 'POST', body: form, headers: { authorization: `Bearer ${token}` } });
  assert.equal(up.status, 200, await up.text());
  ok(await on('POST', '/api/files/share', { token, body: { path: '/Docs/a.txt' } }), 'link');
  await s.server.services.bell.notify({ tenant_id: id }, [admin.id], { event: 'test', severity: 'info', title: 't', body: 'b' });
  await until(`${slug}'s webhook delivery, op, audit and outbox rows`, async () => {
    const r = await rows(id);
    return r.webhook_deliveries > 0 && r.ops > 0 && r.audit > 0 && r.outbox > 0;
  });
  return id;
}

test('a deleted tenant leaves no row in any scoped table; another tenant keeps all of its rows', async () => {
  const operator = await s.login();
  const keep = await populated('keep');
  const gone = await populated('gone');
  const before = await rows(gone);
  for (const table of ['users', 'storages', 'nodes', 'shares', 'webhook_deliveries', 'ops', 'audit', 'notifications', 'outbox', 'sessions', 'api_keys'])
    assert.ok(before[table] > 0, `the tenant has ${table} rows before: ${JSON.stringify(before)}`);

  ok(await s.api('PATCH', `/api/platform/tenants/${gone}`, { token: operator, body: { status: 'suspended' } }), 'suspended');
  // Whatever the other tenant still does meanwhile (its queue, its sweeps) is its own; compare after the purge.
  ok(await s.api('DELETE', `/api/platform/tenants/${gone}`, { token: operator }), 'deleted');
  const keptBefore = await rows(keep);
  await until('the purge', async () => {
    const [t] = await s.server.db.async.sql<{ purged_at: string | null }>('SELECT purged_at FROM tenants WHERE id = ?', [gone]);
    return !!t.purged_at;
  });
  const left = Object.entries(await rows(gone)).filter(([, n]) => n > 0);
  assert.deepEqual(left, [], 'no scoped table holds a row of the deleted tenant');
  const kept = await rows(keep);
  for (const table of ['users', 'storages', 'nodes', 'shares', 'webhook_deliveries', 'audit', 'notifications', 'sessions', 'api_keys'])
    assert.equal(kept[table], keptBefore[table], `the other tenant's ${table} rows are untouched`);
  assert.ok(kept.nodes > 0 && kept.shares > 0);
});
