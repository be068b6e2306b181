/**
 * A content search's order and scope follow the catalogue's writes without the text being indexed again: the
 * hits are ordered and filtered on what SQLite keeps beside their ids (`nodes_search_keys`), which must follow
 * a rename, a move and a delete as `nodes` does. Runs on the test database (TEST_DATABASE=postgres too).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { NodesRepo } from '../catalogue';
import type { Db } from '../db';
import { openTestDb, testStorage, type TestDb } from '../../test/helpers/test-database';
import { SearchService } from './search.service';
import type { ActorFiles } from './actor-files';

let t: TestDb;
let s = 0;
let nodes: NodesRepo;
let search: SearchService;
const actor = (scoped?: number) =>
  ({
    actor: { kind: 'person' },
    visible: () => [{ storage: { id: s, tenant_id: 1, name: 'Files', driver: 'local', read_only: 0 }, level: 'editor' }],
    target: (p: string) => ({ storage: { id: scoped }, rel: p.split('/').slice(2).join('/'), level: 'editor' }),
  }) as unknown as ActorFiles;

before(async () => {
  t = await openTestDb();
  s = await testStorage(t.db);
  nodes = new NodesRepo(t.db);
  search = new SearchService(t.db);
});
after(() => t?.close());

/** Writes `path` (a file with `body`, or a folder) as the write gate does, parents included. */
function write(db: Db, path: string, body: string | null) {
  return db.async.unit(function* (u) {
    yield* nodes.ensureParentsIn(u, { id: s, tenant_id: 1 }, path);
    const e = { name: path.split('/').pop()!, type: body === null ? 'dir' : 'file', size: 1, mtime: 1 } as const;
    const id = yield* nodes.upsertIn(u, { id: s, tenant_id: 1 }, path, e);
    if (body !== null) yield* nodes.setBodyIn(u, id, body);
  });
}

const found = async (q: string, path?: string, limit = 10) => {
  const r = await search.search(actor(s), { q, path, limit });
  return { total: r.total, paths: (JSON.parse(r.entriesJson) as Array<{ path: string }>).map((e) => e.path) };
};

test('hits come folders first, then in natural name order, on the page; the total counts them all', async () => {
  for (const name of ['b/file10.txt', 'b/file9.txt', 'a/file2.txt', 'a/file1.txt']) await write(t.db, name, 'the ocelot report');
  await write(t.db, 'ocelot notes', null);
  assert.deepEqual(await found('ocelot', undefined, 3), { total: 5, paths: ['/Files/ocelot notes', '/Files/a/file1.txt', '/Files/a/file2.txt'] });
  assert.deepEqual(await found('ocelot', '/Files/b'), { total: 2, paths: ['/Files/b/file9.txt', '/Files/b/file10.txt'] });
});

test('a rename and a move reorder and rescope the hits at once; a delete drops them from the page and the total', async () => {
  await t.db.async.unit((u) => nodes.moveTreeIn(u, { id: s, tenant_id: 1 }, 'a/file1.txt', 'a/zeta.txt'));
  assert.deepEqual(await found('ocelot'), {
    total: 5,
    paths: ['/Files/ocelot notes', '/Files/a/file2.txt', '/Files/b/file9.txt', '/Files/b/file10.txt', '/Files/a/zeta.txt'],
  });
  await t.db.async.unit((u) => nodes.moveTreeIn(u, { id: s, tenant_id: 1 }, 'b', 'a/b'));
  assert.deepEqual(await found('ocelot', '/Files/a'), {
    total: 4,
    paths: ['/Files/a/file2.txt', '/Files/a/b/file9.txt', '/Files/a/b/file10.txt', '/Files/a/zeta.txt'],
  });
  assert.deepEqual(await found('ocelot', '/Files/b'), { total: 0, paths: [] });
  await t.db.async.unit((u) => nodes.removeTreeIn(u, { id: s, tenant_id: 1 }, 'a/b'));
  assert.deepEqual(await found('ocelot'), { total: 3, paths: ['/Files/ocelot notes', '/Files/a/file2.txt', '/Files/a/zeta.txt'] });
});
