/**
 * `files.write` in parts (`more: true`; server/plugins/host/staged-writes.ts) from a
 * real app in a real sandbox: parts are committed as one file by the last write,
 * nothing is visible before, a refused commit leaves nothing staged, write access
 * is checked at the first part, staging is per call, the limits hold, and the
 * commit holds the app's own lock on the file (others still get 423).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';
import { buildAppPackage, publisherKey, sampleManifest } from '../helpers/app-package';
import { waitForPluginOp } from '../helpers/example-apps';

const CODE = `
const tryCall = async (m, a) => { try { return await host.call(m, a); } catch (e) { return { error: e.code || 'threw' }; } };
app.action = async ({ params }) => {
  const p = params.path;
  const out = [];
  switch (params.case) {
    case 'parts':
      for (const part of params.parts) out.push(await tryCall('files.write', { path: p, data: part, more: true }));
      { const l = await tryCall('files.list', { path: p.slice(0, p.lastIndexOf('/')) }); out.push({ listed: !!l.entries && l.entries.some((e) => e.path === p) }); }
      out.push(await tryCall('files.write', { path: p, data: params.last, overwrite: !!params.overwrite }));
      { const l = await tryCall('files.list', { path: p.slice(0, p.lastIndexOf('/')) }); out.push({ listed: !!l.entries && l.entries.some((e) => e.path === p) }); }
      break;
    case 'stage-only':
      out.push(await tryCall('files.write', { path: p, data: 'staged-but-never-committed', more: true }));
      break;
    case 'plain':
      out.push(await tryCall('files.write', { path: p, data: params.last, overwrite: true }));
      break;
    case 'many':
      for (let i = 0; i < 5; i++) { const r = await tryCall('files.write', { path: p + i, data: 'x', more: true }); out.push(r.error || r.staged); }
      break;
    case 'locked':
      out.push((await host.call('locks.set', { path: p, label: 'Parts' })).lock.plugin);
      for (let i = 0; i < 3; i++) out.push(await tryCall('files.write', { path: p, data: String(i).repeat(300 * 1024), more: true }));
      out.push(await tryCall('files.write', { path: p, data: 'end', overwrite: true }));
      break;
    case 'big-part':
      out.push(await tryCall('files.write', { path: p, data: 'x'.repeat(700 * 1024 + 1), more: true }));
      break;
  }
  return { message: JSON.stringify(out) };
};`;

describe('app host: files.write in parts', () => {
  let s: TestServer;
  let admin: string;
  let docs: string;
  const cleanups: Array<() => void> = [];
  const run = async (params: Record<string, unknown>, app = 'parts') => {
    const r = await s.api('POST', `/api/files/plugins/actions/${app}/w/run`, { token: admin, body: { paths: ['/Docs/seed.txt'], params } });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    const op = await waitForPluginOp(s, admin, r.body.job_id);
    assert.equal(op.status, 'ok', JSON.stringify(op));
    return { op, out: JSON.parse(op.message) as any[] };
  };

  before(async () => {
    s = await startTestServer();
    admin = await s.login();
    for (const [name, patch] of [
      ['Docs', {}],
      ['Archive', { read_only: true }],
    ] as const) {
      const { dir, cleanup } = tempDir(`filedock-parts-${name}-`);
      cleanups.push(cleanup);
      writeFileSync(join(dir, 'seed.txt'), 'seed');
      writeFileSync(join(dir, 'taken.txt'), 'keep me');
      writeFileSync(join(dir, 'held.txt'), 'before');
      const r = await s.api('POST', '/api/admin/storages', { token: admin, body: { name, driver: 'local', config: { path: dir }, sync_mode: 'poll' } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      if (Object.keys(patch).length) assert.equal((await s.api('PATCH', `/api/admin/storages/${r.body.id}`, { token: admin, body: patch })).status, 200);
      if (name === 'Docs') docs = dir;
    }
    const key = publisherKey('acme');
    assert.equal(
      (await s.api('POST', '/api/admin/app-plugins/keys', { token: admin, body: { publisher: 'acme', public_key_pem: key.trusted.public_key_pem } })).status,
      201,
    );
    for (const [id, permissions] of [
      ['parts', ['files.read', 'files.write', 'locks']],
      ['readonly', ['files.read']],
    ] as const) {
      const zip = await buildAppPackage({
        key,
        code: CODE,
        languages: { en: { 'action.w': 'Write' } },
        manifest: sampleManifest({
          id,
          permissions,
          call_timeout_ms: 10000,
          actions: [{ id: 'w', label: 'action.w', applies: { kind: 'file', ext: ['txt'] } }],
        }),
      });
      const r = await s.api('POST', '/api/admin/app-plugins/apps', { token: admin, raw: new Uint8Array(zip), headers: { 'content-type': 'application/zip' } });
      assert.equal(r.status, 201, JSON.stringify(r.body));
    }
  });
  after(async () => {
    await s?.close();
    for (const c of cleanups) c();
  });

  test('parts are committed by the last write as one file and one output; nothing is listed before', async () => {
    const parts = ['alpha-', 'beta-', 'gamma-'];
    const { op, out } = await run({ case: 'parts', path: '/Docs/joined.txt', parts, last: 'omega' });
    assert.deepEqual(out.slice(0, 3), [
      { path: '/Docs/joined.txt', staged: 6 },
      { path: '/Docs/joined.txt', staged: 11 },
      { path: '/Docs/joined.txt', staged: 17 },
    ]);
    assert.deepEqual(out[3], { listed: false }, 'not in the storage while staged');
    assert.deepEqual(out[4], { path: '/Docs/joined.txt', size: 22 });
    assert.deepEqual(out[5], { listed: true });
    assert.equal(readFileSync(join(docs, 'joined.txt'), 'utf8'), 'alpha-beta-gamma-omega');
    assert.deepEqual(op.outputs, [{ path: '/Docs/joined.txt' }]);
  });

  test('a refused commit (conflict) keeps the file and drops the parts; a read-only storage is refused at the first part', async () => {
    let { out } = await run({ case: 'parts', path: '/Docs/taken.txt', parts: ['new-'], last: 'bytes' });
    assert.equal(out[2].error, 'conflict');
    assert.equal(readFileSync(join(docs, 'taken.txt'), 'utf8'), 'keep me');
    ({ out } = await run({ case: 'parts', path: '/Archive/x.txt', parts: ['a', 'b'], last: 'c' }));
    assert.equal(out[0].error, 'read_only');
    ({ out } = await run({ case: 'parts', path: '/Nowhere/x.txt', parts: ['a'], last: 'c' }));
    assert.equal(out[0].error, 'not_found');
  });

  test('staging belongs to one call: a later job writing the path writes only its own bytes', async () => {
    await run({ case: 'stage-only', path: '/Docs/cross.txt' });
    assert.ok(!existsSync(join(docs, 'cross.txt')));
    await run({ case: 'plain', path: '/Docs/cross.txt', last: 'only this' });
    assert.equal(readFileSync(join(docs, 'cross.txt'), 'utf8'), 'only this');
  });

  test('limits: 4 files staged at once, 700 KiB a part, and the files.write permission', async () => {
    let { out } = await run({ case: 'many', path: '/Docs/m' });
    assert.deepEqual(out, [1, 1, 1, 1, 'app_host_refused']);
    ({ out } = await run({ case: 'big-part', path: '/Docs/big.txt' }));
    assert.equal(out[0].error, 'app_host_refused');
    ({ out } = await run({ case: 'parts', path: '/Docs/ro.txt', parts: ['a'], last: 'b' }, 'readonly'));
    assert.deepEqual([out[0].error, out[2].error], ['app_host_refused', 'app_host_refused']);
    assert.ok(!readdirSync(docs).some((n) => n.startsWith('m') || n === 'ro.txt' || n === 'big.txt'));
  });

  test('a file the app itself locked: the commit holds its lock (> 700 KiB in parts); another writer still gets 423', async () => {
    assert.equal((await s.api('GET', '/api/files/manager?path=/Docs', { token: admin })).status, 200); // catalogued: a lock needs the file's row
    const { op, out } = await run({ case: 'locked', path: '/Docs/held.txt' });
    assert.equal(out[0], 'parts');
    assert.deepEqual(
      out.slice(1, 4).map((r) => r.staged),
      [1, 2, 3].map((n) => n * 300 * 1024),
      JSON.stringify(out),
    );
    assert.deepEqual(out[4], { path: '/Docs/held.txt', size: 900 * 1024 + 3 });
    assert.equal(readFileSync(join(docs, 'held.txt'), 'utf8'), ['0', '1', '2'].map((c) => c.repeat(300 * 1024)).join('') + 'end');
    assert.deepEqual(op.outputs, [{ path: '/Docs/held.txt' }]);
    const r = await s.api('POST', '/api/files/save-text', { token: admin, body: { path: '/Docs/held.txt', content: 'not yours' } });
    assert.equal(r.status, 423, JSON.stringify(r.body));
    assert.equal(r.body.error, 'locked');
    assert.equal(r.body.details.plugin, 'parts');
    assert.ok(readFileSync(join(docs, 'held.txt'), 'utf8').endsWith('end'));
  });

  test('staging files live in the OS temp folder only while staged', async () => {
    const staged = () => readdirSync(tmpdir()).filter((n) => n.startsWith('filedock-app-part-')).length;
    const before = staged();
    await run({ case: 'parts', path: '/Docs/tmpcheck.txt', parts: ['a', 'b'], last: 'c' });
    assert.equal(staged(), before, 'a committed file leaves no staging folder');
  });
});
