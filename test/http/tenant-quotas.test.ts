/**
 * Quotas per tenant (docs/tenants.md, "Step 4: quotas"): a write past the tenant's `bytes` or `files` quota is
 * refused `quota_exceeded` with `details.scope: "tenant"` at every door (the form upload, a resumable upload at
 * init and again at completion, a copy, a file request, WebDAV PUT and S3 PutObject through real clients) and
 * leaves no file; a person past `people` and a link past `links` likewise; the tenant admin and the operator
 * see the usage; another tenant without quotas writes on. On both databases (POSTGRES_SUITES).
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { s3Client } from '../gateways/s3-setup';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';

const QT = { email: 'boss@quota.test', password: 'quota-password-1' };
const OT = { email: 'boss@other.test', password: 'other-password-1' };
const bytes = (n: number) => 'q'.repeat(n);

describe('tenants: quotas', () => {
  let s: TestServer;
  let operator: string;
  let qtId: number;
  let otId: number;
  let qt: string;
  let ot: string;
  const qtDir = tempDir('filedock-quota-qt-');
  const otDir = tempDir('filedock-quota-ot-');
  /** A request to tenant `qt` (or `ot`) through its `/t/<slug>/` prefix, as its admin. */
  const onQt = (method: string, path: string, body?: unknown) => s.api(method, `/t/qt${path}`, { token: qt, body });
  const onOt = (method: string, path: string, body?: unknown) => s.api(method, `/t/ot${path}`, { token: ot, body });
  const setQuotas = async (quotas: Record<string, number>) => {
    const r = await s.api('PATCH', `/api/platform/tenants/${qtId}`, { token: operator, body: { quotas } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
  };
  /** The refusal's envelope: the tenant's quota of `kind`, with its limit and what was used. */
  const refused = (r: { status: number; body: any }, status: number, kind: string, quota?: number, used?: number) => {
    assert.equal(r.status, status, JSON.stringify(r.body));
    assert.equal(r.body.error, 'quota_exceeded');
    assert.equal(r.body.details?.scope, 'tenant');
    assert.equal(r.body.details?.kind, kind);
    if (quota !== undefined) assert.equal(r.body.details?.quota, quota);
    if (used !== undefined) assert.equal(r.body.details?.used, used);
  };
  /** Names in the tenant's storage folder, temp files included. */
  const onDisk = () => readdirSync(qtDir.dir);
  const upload = (prefix: string, token: string, folder: string, name: string, n: number) => {
    const form = new FormData();
    form.append('path', folder);
    form.append('file', new Blob([Buffer.from(bytes(n))]), name);
    return fetch(`${s.url}${prefix}/api/files/upload`, { method: 'POST', body: form, headers: { authorization: `Bearer ${token}` } });
  };

  before(async () => {
    s = await startTestServer({ SERVICE_MULTI_TENANT: '1', SERVICE_S3_LISTEN: '127.0.0.1:0', SERVICE_WEBDAV_ALLOW_HTTP: '1' });
    operator = await s.login();
    for (const [slug, admin] of [
      ['qt', QT],
      ['ot', OT],
    ] as const) {
      const made = await s.api('POST', '/api/platform/tenants', { token: operator, body: { slug, name: slug, admin } });
      assert.equal(made.status, 201, JSON.stringify(made.body));
      if (slug === 'qt') qtId = made.body.tenant.id;
      else otId = made.body.tenant.id;
    }
    qt = (await s.api('POST', '/t/qt/api/auth/login', { body: QT })).body.token;
    ot = (await s.api('POST', '/t/ot/api/auth/login', { body: OT })).body.token;
    const storage = (dir: string) => ({ name: 'Q', driver: 'local', rbac_enabled: false, config: { path: dir } });
    assert.equal((await onQt('POST', '/api/admin/storages', storage(qtDir.dir))).status, 200);
    assert.equal((await onOt('POST', '/api/admin/storages', storage(otDir.dir))).status, 200);
    assert.equal((await onQt('POST', '/api/files/mkdir', { path: '/Q/inbox' })).status, 200);
  });
  after(async () => {
    await s.close();
    qtDir.cleanup();
    otDir.cleanup();
  });

  test('bytes: every write door refuses past the quota and leaves no file; another tenant writes on', async () => {
    await setQuotas({ bytes: 100 });
    assert.equal((await onQt('POST', '/api/files/save-text', { path: '/Q/a.txt', content: bytes(60) })).status, 200);
    const usage = await onQt('GET', '/api/admin/quotas');
    assert.equal(usage.status, 200, JSON.stringify(usage.body));
    assert.deepEqual(usage.body.quotas.bytes, { limit: 100, used: 60 });

    // The form upload: streamed, cut off past the room left.
    const form = await upload('/t/qt', qt, '/Q', 'up.bin', 60);
    refused({ status: form.status, body: await form.json() }, 413, 'bytes', 100, 60);
    // A resumable upload: refused at init from its declared size.
    refused(await onQt('POST', '/api/files/upload/init', { path: '/Q/r.bin', size: 60 }), 413, 'bytes', 100, 60);
    // A copy.
    refused(await onQt('POST', '/api/files/copy', { from: '/Q/a.txt', to: '/Q/a2.txt' }), 413, 'bytes', 100, 60);
    // A file request's upload (the public door: 507).
    const drop = await onQt('POST', '/api/files/share', { path: '/Q/inbox', kind: 'drop' });
    assert.equal(drop.status, 200, JSON.stringify(drop.body));
    const sub = await s.api('POST', `/t/qt/api/public/drop/${drop.body.token}/submissions`, { body: {} });
    assert.equal(sub.status, 200, JSON.stringify(sub.body));
    refused(
      await s.api('POST', `/t/qt/api/public/drop/${drop.body.token}/submissions/${sub.body.submission_id}/files`, { body: { name: 'd.bin', size: 60 } }),
      507,
      'bytes',
    );
    // WebDAV PUT (a tenant's person signs in as name@slug).
    const basic = `Basic ${Buffer.from(`${QT.email}@qt:${QT.password}`).toString('base64')}`;
    const put = await fetch(`${s.url}/dav/Q/dav.bin`, { method: 'PUT', body: bytes(60), headers: { authorization: basic } });
    assert.equal(put.status, 507, await put.text());
    // S3 PutObject with the tenant admin's key.
    const key = await onQt('POST', '/api/auth/keys', { name: 's3', verbs: ['files:read', 'files:write'] });
    assert.equal(key.status, 201, JSON.stringify(key.body));
    const endpoint = s.server.services.gateways.registry.status().gateways.find((g) => g.protocol === 's3')!.url!;
    const s3 = s3Client(endpoint, key.body.s3);
    await assert.rejects(s3.send(new PutObjectCommand({ Bucket: 'Q', Key: 's3.bin', Body: bytes(60) })), (e: Error) => e.name === 'EntityTooLarge');

    for (const name of ['up.bin', 'r.bin', 'a2.txt', 'dav.bin', 's3.bin']) assert.ok(!existsSync(join(qtDir.dir, name)), `${name} was not left`);
    assert.deepEqual(
      readdirSync(join(qtDir.dir, 'inbox'), { recursive: true, withFileTypes: true }).filter((e) => e.isFile()),
      [],
      'no file request upload left (its submission folder may be there)',
    );
    assert.deepEqual(
      onDisk().filter((n) => n.startsWith('.')),
      [],
      'no temp file left',
    );
    assert.deepEqual((await onQt('GET', '/api/admin/quotas')).body.quotas.bytes, { limit: 100, used: 60 }, 'nothing was counted');

    // Within what is left, the same doors write; another tenant (no quotas) writes what it likes.
    assert.equal((await upload('/t/qt', qt, '/Q', 'small.bin', 30)).status, 200);
    assert.equal((await onOt('POST', '/api/files/save-text', { path: '/Q/big.txt', content: bytes(500) })).status, 200);
    assert.equal((await upload('/t/ot', ot, '/Q', 'big.bin', 500)).status, 200);
    assert.deepEqual((await onQt('GET', '/api/admin/quotas')).body.quotas.bytes, { limit: 100, used: 90 });
    await setQuotas({});
  });

  test('a resumable upload is checked again at completion: refused, nothing is published and the session stays', async () => {
    await setQuotas({ bytes: 1000 });
    const used = (await onQt('GET', '/api/admin/quotas')).body.quotas.bytes.used as number;
    const init = await onQt('POST', '/api/files/upload/init', { path: '/Q/late.bin', size: 50 });
    assert.equal(init.status, 200, JSON.stringify(init.body));
    const id = init.body.upload_id;
    const chunk = await fetch(`${s.url}/t/qt/api/files/upload/chunk?upload_id=${id}&part=1`, {
      method: 'POST',
      body: bytes(50),
      headers: { authorization: `Bearer ${qt}`, 'content-type': 'application/octet-stream' },
    });
    const text = await chunk.text();
    assert.equal(chunk.status, 200, text);
    const { etag } = JSON.parse(text) as { etag: string };
    // Another write took the room meanwhile.
    await setQuotas({ bytes: used + 10 });
    refused(await onQt('POST', '/api/files/upload/finalize', { upload_id: id, etags: [{ part: 1, etag }] }), 413, 'bytes', used + 10, used);
    assert.ok(!existsSync(join(qtDir.dir, 'late.bin')));
    await setQuotas({ bytes: 1000 });
    const done = await onQt('POST', '/api/files/upload/finalize', { upload_id: id, etags: [{ part: 1, etag }] });
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.ok(existsSync(join(qtDir.dir, 'late.bin')));
    await setQuotas({});
  });

  test('files: a new file past the quota is refused, replacing one is not', async () => {
    const files = (await onQt('GET', '/api/admin/quotas')).body.quotas.files.used as number;
    await setQuotas({ files });
    refused(await onQt('POST', '/api/files/save-text', { path: '/Q/new.txt', content: 'n' }), 413, 'files', files, files);
    assert.ok(!existsSync(join(qtDir.dir, 'new.txt')));
    const basic = `Basic ${Buffer.from(`${QT.email}@qt:${QT.password}`).toString('base64')}`;
    assert.equal((await fetch(`${s.url}/dav/Q/new.txt`, { method: 'PUT', body: 'n', headers: { authorization: basic } })).status, 507);
    assert.equal((await onQt('POST', '/api/files/save-text', { path: '/Q/a.txt', content: 'replaced' })).status, 200, 'an overwrite adds no file');
    assert.equal((await onOt('POST', '/api/files/save-text', { path: '/Q/new.txt', content: 'n' })).status, 200, 'the other tenant');
    await setQuotas({});
  });

  test('people: an account past the quota is refused, whatever door makes it', async () => {
    const people = (await onQt('GET', '/api/admin/quotas')).body.quotas.people.used as number;
    assert.equal(people, 1, 'the first admin');
    await setQuotas({ people: 2 });
    assert.equal((await onQt('POST', '/api/admin/users', { email: 'two@quota.test', password: 'user-password-1' })).status, 200);
    refused(await onQt('POST', '/api/admin/users', { email: 'three@quota.test', password: 'user-password-1' }), 413, 'people', 2, 2);
    assert.equal((await onOt('POST', '/api/admin/users', { email: 'three@quota.test', password: 'user-password-1' })).status, 200, 'the other tenant');
    const counted = await s.api('GET', `/api/platform/tenants/${qtId}`, { token: operator });
    assert.equal(counted.body.tenant.usage.people, 2);
    await setQuotas({});
  });

  test('links: a live link past the quota is refused; a revoked one frees its place', async () => {
    const links = (await onQt('GET', '/api/admin/quotas')).body.quotas.links.used as number;
    assert.equal(links, 1, 'the file request made above');
    await setQuotas({ links: 2 });
    const first = await onQt('POST', '/api/files/share', { path: '/Q/a.txt' });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    refused(await onQt('POST', '/api/files/share', { path: '/Q/a.txt' }), 413, 'links', 2, 2);
    refused(await onQt('POST', '/api/files/share', { path: '/Q/inbox', kind: 'drop' }), 413, 'links', 2, 2);
    assert.equal((await onOt('POST', '/api/files/share', { path: '/Q/big.txt' })).status, 200, 'the other tenant');
    assert.equal((await onQt('DELETE', `/api/files/share/${first.body.id}`)).status, 200);
    assert.equal((await onQt('POST', '/api/files/share', { path: '/Q/a.txt' })).status, 200);
    await setQuotas({});
  });

  test('people and links under concurrency: ten creates at once with three places free, exactly three are made', async () => {
    const at = async (kind: 'people' | 'links') => (await onQt('GET', '/api/admin/quotas')).body.quotas[kind].used as number;
    const outcome = (rs: Array<{ status: number; body: any }>) => {
      const made = rs.filter((r) => r.status === 200).length;
      for (const r of rs.filter((r) => r.status !== 200)) refused(r, 413, r.body.details?.kind);
      return made;
    };
    const people = await at('people');
    await setQuotas({ people: people + 3 });
    const accounts = await Promise.all(
      Array.from({ length: 10 }, (_, i) => onQt('POST', '/api/admin/users', { email: `race${i}@quota.test`, password: 'user-password-1' })),
    );
    assert.equal(outcome(accounts), 3, accounts.map((r) => r.status).join(' '));
    assert.equal(await at('people'), people + 3, 'the tenant holds exactly its quota');

    const links = await at('links');
    await setQuotas({ links: links + 3 });
    const made = await Promise.all(
      Array.from({ length: 10 }, (_, i) => onQt('POST', '/api/files/share', i % 2 ? { path: '/Q/a.txt' } : { path: '/Q/inbox', kind: 'drop' })),
    );
    assert.equal(outcome(made), 3, made.map((r) => r.status).join(' '));
    assert.equal(await at('links'), links + 3);
    await setQuotas({});
  });

  test('the operator sees each tenant’s usage; the tenant admin reads their own quotas', async () => {
    await setQuotas({ bytes: 5000, files: 50, people: 10, links: 10, egress_share: 25 });
    const list = await s.api('GET', '/api/platform/tenants', { token: operator });
    assert.equal(list.status, 200);
    const byId = new Map(list.body.tenants.map((t: any) => [t.id, t]));
    const mine = byId.get(qtId) as any;
    const other = byId.get(otId) as any;
    const own = (await onQt('GET', '/api/admin/quotas')).body.quotas;
    assert.deepEqual(mine.usage, { bytes: own.bytes.used, files: own.files.used, people: own.people.used, links: own.links.used });
    assert.deepEqual(own.bytes.limit, 5000);
    assert.equal(own.egress_share, 25);
    // The catalogue's own count agrees with the figure the writes and removals kept current.
    const counted = async () => {
      const [row] = await s.server.db.async.sql<{ b: number | string; n: number | string }>(
        "SELECT coalesce(sum(size), 0) AS b, count(*) AS n FROM nodes WHERE tenant_id = ? AND type = 'file' AND deleted_at IS NULL",
        [qtId],
      );
      return [Number(row.b), Number(row.n)];
    };
    assert.deepEqual([own.bytes.used, own.files.used], await counted());
    const gone = await onQt('POST', '/api/files/delete', { paths: ['/Q/small.bin', '/Q/late.bin'] });
    assert.equal(gone.status, 200, JSON.stringify(gone.body));
    const after = (await onQt('GET', '/api/admin/quotas')).body.quotas;
    assert.deepEqual([after.bytes.used, after.files.used], await counted(), 'after a delete');
    assert.ok(other.usage.bytes >= 1000, 'the other tenant’s own writes');
    assert.deepEqual((await onOt('GET', '/api/admin/quotas')).body.quotas.bytes.limit, null, 'no quota: no limit');
    await setQuotas({});
  });
});
