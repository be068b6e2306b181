import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';
import { DEFAULT_TENANT } from '../../server/db';

// On a watched storage the watcher may catalogue a new file between its write and the write gate's
// announcement; the gate must still call it an upload, since the writer knew it was new.
describe('a new file on a watched storage is announced as uploaded, an overwrite as updated', () => {
  let s: TestServer;
  let admin: string;
  let cleanup: () => void;
  const seen: Array<[string, string]> = [];

  before(async () => {
    let root;
    ({ dir: root, cleanup } = tempDir('filedock-gate-'));
    s = await startTestServer();
    admin = await s.login();
    const st = await s.api('POST', '/api/admin/storages', {
      token: admin,
      body: { name: 'Watched', driver: 'local', config: { path: root }, sync_mode: 'fsnotify' },
    });
    assert.equal(st.status, 200, JSON.stringify(st.body));
    for (const ev of ['file.uploaded', 'file.updated'] as const) s.server.bus.on(ev, (e: { node: { path: string } }) => void seen.push([ev, e.node.path]));
  });
  after(async () => {
    await s.close();
    cleanup();
  });

  test('forty saves of new files, then forty overwrites, with the watcher running', async () => {
    const names = Array.from({ length: 40 }, (_, i) => `n${i}.txt`);
    for (const n of names) {
      assert.equal((await s.api('POST', '/api/files/save-text', { token: admin, body: { path: `/Watched/${n}`, content: `new ${n}` } })).status, 200);
      await new Promise((r) => setTimeout(r, 15)); // let the watcher run between writes
    }
    for (const n of names)
      assert.equal((await s.api('POST', '/api/files/save-text', { token: admin, body: { path: `/Watched/${n}`, content: `again ${n}` } })).status, 200);
    await s.server.queue.idle(10_000);
    await new Promise((r) => setTimeout(r, 500));
    for (const n of names) {
      const kinds = seen.filter(([, p]) => p === n).map(([k]) => k);
      assert.deepEqual(kinds, ['file.uploaded', 'file.updated'], `${n}: ${kinds.join(', ')}`);
    }
  });

  test('the gate takes the writer’s word over a row the watcher already made', async () => {
    const st = s.server.catalogue.repo.byNameOrUid(DEFAULT_TENANT, 'Watched')!;
    const entry = { name: 'raced.txt', type: 'file' as const, size: 3, mtime: Date.now(), mime: 'text/plain' };
    const { db, catalogue } = s.server;
    await db.async.unit((t) => catalogue.nodes.upsertIn(t, { id: st.id, tenant_id: 1 }, 'raced.txt', entry, null)); // as the watcher's sync would
    await s.server.catalogue.gate.written(st.id, 'raced.txt', entry, { origin: 'upload', created: true });
    await s.server.catalogue.gate.written(st.id, 'raced.txt', entry, { origin: 'upload' });
    assert.deepEqual(
      seen.filter(([, p]) => p === 'raced.txt').map(([k]) => k),
      ['file.uploaded', 'file.updated'],
    );
  });

  test('two announcements of one new path at once: one row, one upload and one update, its new folder made once', async () => {
    const st = s.server.catalogue.repo.byNameOrUid(DEFAULT_TENANT, 'Watched')!;
    const entry = { name: 'twice.txt', type: 'file' as const, size: 3, mtime: Date.now(), mime: 'text/plain' };
    // Nothing on the disk: the watcher stays out of it, the two units of work decide alone.
    const [a, b] = await Promise.all([0, 1].map(() => s.server.catalogue.gate.written(st.id, 'fresh/twice.txt', entry, { origin: 'upload', body: 'abc' })));
    assert.equal(a.id, b.id, 'one row');
    assert.deepEqual(
      seen
        .filter(([, p]) => p === 'fresh/twice.txt')
        .map(([k]) => k)
        .sort(),
      ['file.updated', 'file.uploaded'],
    );
    const { db } = s.server;
    const rows = await db.async.all(
      db.k.selectFrom('nodes').select('path').where('tenant_id', '=', 1).where('storage_id', '=', st.id).where('path', 'in', ['fresh', 'fresh/twice.txt']),
    );
    assert.equal(rows.length, 2, 'the file and its folder, once each');
  });

  test('a folder check that lands between a rename on disk and its record waits for the record: the node keeps its id', async () => {
    const st = s.server.catalogue.repo.byNameOrUid(DEFAULT_TENANT, 'Watched')!;
    assert.equal((await s.api('POST', '/api/files/save-text', { token: admin, body: { path: '/Watched/ping.txt', content: 'kept' } })).status, 200);
    const { db } = s.server;
    const idOf = async (p: string) =>
      (await db.async.all(db.k.selectFrom('nodes').select('id').where('tenant_id', '=', 1).where('storage_id', '=', st.id).where('path', '=', p)))[0]?.id;
    const id = await idOf('ping.txt');
    assert.ok(id);
    // The real driver's rename, then a folder check of the same folder started at once, as the watcher's
    // would be; the rename answers 100 ms later, before the gate records it.
    const driver = await s.server.catalogue.driverFor(st.id);
    const move = driver.move!.bind(driver);
    const checks: Promise<void>[] = [];
    driver.move = async (from, to, o) => {
      await move(from, to, o);
      checks.push(s.server.catalogue.syncer.refresh(st.id, '', 5_000));
      await new Promise((r) => setTimeout(r, 100));
    };
    try {
      let name = 'ping.txt';
      for (let i = 0; i < 6; i++) {
        const next = name === 'ping.txt' ? 'pong.txt' : 'ping.txt';
        const r = await s.api('POST', '/api/files/rename', { token: admin, body: { path: `/Watched/${name}`, new_name: next } });
        assert.equal(r.status, 200, JSON.stringify(r.body));
        await Promise.all(checks);
        name = next;
        assert.equal(await idOf(name), id, `rename ${i + 1}: the node kept its id`);
        assert.equal(await idOf(name === 'ping.txt' ? 'pong.txt' : 'ping.txt'), undefined, 'no row left at the old name');
      }
    } finally {
      driver.move = move;
    }
  });
});
