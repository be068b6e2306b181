import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openDatabase } from '../db';
import { tempDir } from '../../test/helpers/tools';
import { NodesRepo, SUBTREE } from './nodes.repo';

test('a subtree is removed and moved through one range of the path index; siblings sharing its name prefix stay', async () => {
  const t = tempDir('filedock-nodes-');
  const db = openDatabase(join(t.dir, 'db.sqlite'));
  try {
    db.sqlite.prepare("INSERT INTO storages (uid, name, driver, created_at, updated_at) VALUES ('st1', 'S', 'local', '', '')").run();
    const repo = new NodesRepo(db);
    const file = { type: 'file' as const, size: 1, mtime: 0 };
    await db.async.unit(function* (t) {
      for (const p of ['a', 'a/b', 'a/b/c.txt', 'a.txt', 'a-1', 'a0', 'ab', 'z/a/x'])
        yield* repo.upsertIn(t, { id: 1, tenant_id: 1 }, p, { ...file, name: p.split('/').at(-1)!, type: p === 'a' || p === 'a/b' ? 'dir' : 'file' });
    });
    const paths = () => db.sqlite.prepare('SELECT path FROM nodes WHERE storage_id = 1 ORDER BY path').pluck().all();

    await db.async.unit((t) => repo.moveTreeIn(t, { id: 1, tenant_id: 1 }, 'a', 'm'));
    assert.deepEqual(paths(), ['a-1', 'a.txt', 'a0', 'ab', 'm', 'm/b', 'm/b/c.txt', 'z/a/x']);
    await db.async.unit((t) => repo.removeTreeIn(t, { id: 1, tenant_id: 1 }, 'm'));
    assert.deepEqual(paths(), ['a-1', 'a.txt', 'a0', 'ab', 'z/a/x']);
    const plan = db.sqlite
      .prepare(`EXPLAIN QUERY PLAN SELECT id FROM nodes WHERE tenant_id = ? AND ${SUBTREE}`)
      .all(1, 1, 'a', 'a0', 'a', 'a/')
      .map((r) => (r as { detail: string }).detail);
    assert.ok(
      plan.some((d) => /nodes_path \(storage_id=\? AND path>\? AND path<\?\)/.test(d)),
      plan.join('; '),
    );
  } finally {
    void db.close();
    t.cleanup();
  }
});
