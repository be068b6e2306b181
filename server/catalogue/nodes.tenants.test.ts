/**
 * Multi-tenant mode (docs/tenants.md, "The nodes"): the same storage name and paths in tenants 1 and 2, on this
 * run's database (TEST_DATABASE=postgres too). A node, a removal and its rows carry their storage's tenant;
 * a statement naming another tenant's storage or node (a forged `StorageRef`: tenant 1 with tenant 2's
 * storage id) neither lists, finds, searches, counts, changes nor deletes anything of it.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { EventBus } from '../events';
import type { TenantScope } from '../db';
import { openTestDb, testStorage, type TestDb } from '../../test/helpers/test-database';
import { NodesRepo } from './nodes.repo';
import { SyncNodesRepo } from './sync.repo';
import { AppStateRepo } from './app-state.repo';
import type { StorageRef } from './storage-ref';
import { ListingRepo } from '../files/listing.repo';
import { FolderIndexRepo } from '../files/folder-index.repo';
import { SearchRepo } from '../files/search.repo';
import { parseQuery } from '../files/search-query';
import { S3ListingRepo } from '../gateways/s3/listing.repo';

const T1: TenantScope = { tenant_id: 1 };
const T2: TenantScope = { tenant_id: 2 };
const PATHS = ['docs', 'docs/otter.txt', 'docs/deep', 'docs/deep/otter notes.txt'];

let t: TestDb;
let nodes: NodesRepo;
let s1: StorageRef;
let s2: StorageRef;
/** Tenant 1 naming tenant 2's storage. */
let forged: StorageRef;
const ids = new Map<string, number>();

before(async () => {
  t = await openTestDb();
  nodes = new NodesRepo(t.db);
  s1 = { id: await testStorage(t.db, 'Files', T1), ...T1 };
  s2 = { id: await testStorage(t.db, 'Files', T2), ...T2 };
  forged = { id: s2.id, ...T1 };
  for (const s of [s1, s2])
    await t.db.async.unit(function* (u) {
      for (const p of PATHS) {
        const id = yield* nodes.upsertIn(u, s, p, { name: p.split('/').pop()!, type: p.endsWith('.txt') ? 'file' : 'dir', size: 7, mtime: 1 });
        ids.set(`${s.tenant_id}:${p}`, id);
      }
    });
});
after(() => t?.close());

const theirs = (p: string) => ids.get(`2:${p}`)!;
const tenantOf = async (id: number) =>
  Number((await t.db.async.sql<{ tenant_id: number }>('SELECT tenant_id FROM nodes WHERE tenant_id IN (1, 2) AND id = ?', [id]))[0]?.tenant_id);

test('a node is written with its storage’s tenant, and the same paths in two tenants are two rows', async () => {
  assert.equal(await tenantOf(ids.get('1:docs/otter.txt')!), 1);
  assert.equal(await tenantOf(theirs('docs/otter.txt')), 2);
  assert.notEqual(ids.get('1:docs/otter.txt'), theirs('docs/otter.txt'));
});

test('another tenant’s nodes are neither found by id or path, listed, counted nor summed', async () => {
  assert.equal(await nodes.get(forged, 'docs/otter.txt'), undefined);
  assert.deepEqual(await nodes.getMany(forged, PATHS), [undefined, undefined, undefined, undefined]);
  assert.equal(await nodes.byId(T1, theirs('docs/otter.txt')), undefined);
  assert.equal((await nodes.byId(T2, theirs('docs/otter.txt')))?.path, 'docs/otter.txt');
  assert.deepEqual(await nodes.list(forged, 'docs', { sort: 'name', desc: false, limit: 10, offset: 0 }), { rows: [], total: 0 });
  assert.equal((await nodes.list(s1, 'docs', { sort: 'name', desc: false, limit: 10, offset: 0 })).total, 2);
  assert.deepEqual(await nodes.subtree(forged, ''), []);
  assert.equal(Number(await nodes.treeBytes(forged, 'docs')), 0);
  assert.deepEqual(await nodes.usage(T1, { storageId: s2.id }), { used_bytes: 0, file_count: 0 });
  assert.equal(Number((await nodes.usage(T1, {})).file_count), 2, 'tenant 1’s own two files');
  const sync = new SyncNodesRepo(t.db);
  assert.equal(await sync.count(forged), 0);
  assert.deepEqual(await sync.dirRows(forged, ['docs']), []);
  assert.deepEqual(await sync.idsAfter(forged, ''), []);
});

test('the listing, its probe, the folder index, the S3 listing, app state and search answer nothing of another tenant', async () => {
  const listing = new ListingRepo(t.db);
  assert.deepEqual(await listing.probe(forged, 'docs'), { type: null, known: false, filled: false });
  assert.equal((await listing.probe(s2, 'docs')).type, 'dir');
  const page = await listing.page({ storageId: s2.id, tenantId: 1, dir: 'docs', sort: 'name', desc: false, limit: 10, offset: 0, perm: 'editor' });
  assert.deepEqual([page.count, page.total], [0, 0]);
  const index = new FolderIndexRepo(t.db);
  assert.equal(await index.size(forged, 'docs'), 0);
  assert.deepEqual(await index.rows(forged, 'docs', 'name', false, 'editor'), []);
  assert.deepEqual(await index.anchors(forged, 'docs', 'name', false, 1), []);
  const s3 = new S3ListingRepo(t.db);
  assert.deepEqual(await s3.children(forged, 'docs', '', '', '\u{10ffff}', 10), []);
  assert.deepEqual(await s3.subtree({ sid: s2.id, tid: 1, lo: '', hi: '\u{10ffff}', base: '', after: '', prefix: '', top: '\u{10ffff}', limit: 10 }), []);
  assert.equal((await s3.children(s2, 'docs', '', '', '\u{10ffff}', 10)).length, 2);
  const state = new AppStateRepo(t.db, new EventBus(t.db));
  await t.db.async.unit((u) => state.setItemsIn(u, { id: theirs('docs/otter.txt'), ...T1 }, ['x:y']));
  assert.deepEqual(await state.within(s2, ''), [], 'tenant 1 put no item on tenant 2’s node');
  assert.deepEqual(await state.within(forged, ''), []);
  const search = new SearchRepo(t.db);
  const scope = (s: StorageRef) => ({ storages: [{ id: s.id, tenant_id: s.tenant_id, name: 'Files', level: 'editor' }], prefix: '', excluded: [] });
  assert.equal((await search.page(parseQuery('otter'), {}, scope(forged), 10, false)).total, 0, 'by name');
  assert.equal((await search.page(parseQuery('ot'), { type: 'file' }, scope(forged), 10, false)).total, 0, 'a short term');
  assert.equal((await search.page(parseQuery('otter'), {}, scope(s2), 10, false)).total, 2);
  assert.equal((await search.page(parseQuery('otter'), {}, scope(s1), 10, false)).total, 2);
});

test('another tenant’s nodes are neither changed, moved nor deleted, and its removals are its own', async () => {
  await assert.rejects(
    t.db.async.unit((u) => nodes.upsertIn(u, forged, 'docs/otter.txt', { name: 'otter.txt', type: 'file', size: 99, mtime: 9 })),
    { code: 'not_found' },
    'the conflict branch names the tenant: nothing written',
  );
  const sync = new SyncNodesRepo(t.db);
  await t.db.async.unit((u) =>
    sync.updateIn(
      u,
      forged,
      theirs('docs/otter.txt'),
      { e: { path: 'docs/otter.txt', name: 'otter.txt', type: 'file', size: 99, mtime: 9 }, name: 'otter.txt', mime: null, mtime: 9 },
      'now',
    ),
  );
  assert.equal(Number((await nodes.get(s2, 'docs/otter.txt'))?.size), 7, 'neither the upsert nor the sync’s update changed it');
  const since = new Date(Date.now() - 1000).toISOString();
  assert.deepEqual(await t.db.async.unit((u) => nodes.removeTreeIn(u, forged, 'docs')), []);
  assert.deepEqual(await t.db.async.unit((u) => nodes.removeFilesIn(u, forged, [theirs('docs/otter.txt')], 'z')), []);
  await t.db.async.unit((u) => nodes.moveTreeIn(u, forged, 'docs', 'moved'));
  assert.deepEqual((await nodes.subtree(s2, '')).map((r) => r.path).sort(), [...PATHS].sort(), 'tenant 2’s tree as it was');
  // Tenant 1 removes its own folder: the removal is noted in tenant 1 only.
  assert.equal((await t.db.async.unit((u) => nodes.removeTreeIn(u, s1, 'docs/deep'))).length, 2);
  assert.equal(await nodes.removedSince(s1, since), true);
  assert.equal(await nodes.removedSince(s2, since), false, 'tenant 2 removed nothing');
  const gone = await t.db.async.read((u) => nodes.removalsSinceIn(u, s2, since));
  assert.equal(gone('docs/deep/otter notes.txt'), false);
  assert.ok(await nodes.get(s2, 'docs/deep/otter notes.txt'), 'tenant 2’s same path stays');
});
