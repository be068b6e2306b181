/**
 * Search on PostgreSQL's pool (`db.async`) (docs/postgresql.md), against a real cluster: one statement gives
 * the page and the total, the same entries SQLite
 * gives for the same catalogue; the event loop runs while PostgreSQL searches.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { openDatabase, openPostgresDatabase, type Db } from '../db';
import { sortKey } from '../catalogue';
import { SearchService, type SearchInput } from './search.service';
import type { ActorFiles } from './actor-files';
import { needPostgres, startPostgres, type PgCluster } from '../../test/helpers/postgres';
import { tempDir } from '../../test/helpers/tools';

const skip = needPostgres();
const FILES = 1200;

/** Two storages; `Docs` holds FILES report files, a folder named like them, and a body match. */
function fill(db: Db): Promise<void> {
  return db.async.unit(function* (t) {
    for (const name of ['Docs', 'Other'])
      yield* t.sql("INSERT INTO storages (uid, name, driver, created_at, updated_at) VALUES (?, ?, 'local', '', '')", [name, name]);
    function* add(storage: number, dir: string, name: string, type: 'file' | 'dir', body: string | null = null, meta: string | null = null, taken?: number) {
      const [row] = yield* t.sql<{ id: number }>(
        "INSERT INTO nodes (storage_id, dir, name, path, type, size, mtime, sort_key, updated_at, mime) VALUES (?, ?, ?, ?, ?, ?, ?, ?, '', ?) RETURNING id",
        [
          storage,
          dir,
          name,
          dir ? `${dir}/${name}` : name,
          type,
          type === 'dir' ? 0 : name.length,
          1_700_000_000_000 + name.length,
          sortKey(name),
          type === 'dir' ? null : 'application/pdf',
        ],
      );
      yield* t.sql('INSERT INTO search_fts (rowid, name, body, meta) VALUES (?, ?, ?, ?)', [Number(row.id), name, body, meta]);
      if (taken !== undefined)
        yield* t.sql("INSERT INTO text_extracts (node_id, state, size, mtime, taken, updated_at) VALUES (?, 'done', 1, 1, ?, '')", [Number(row.id), taken]);
    }
    yield* add(1, '', 'reports', 'dir');
    yield* add(1, '', 'Report-archive', 'dir');
    for (let i = 0; i < FILES; i++) yield* add(1, i % 2 ? 'reports' : '', `report-${i}.pdf`, 'file');
    yield* add(1, 'reports', 'notes.txt', 'file', 'the quarterly REPORT is late');
    yield* add(2, '', 'report-other.pdf', 'file');
    yield* add(2, '', 'unrelated.pdf', 'file');
    yield* add(1, 'photos', 'IMG_0001.jpg', 'file', '', '2019-06-01\nCanon\nEOS 5D\nIstanbul', Date.parse('2019-06-01T11:22:00Z'));
    yield* add(1, 'photos', 'IMG_0002.jpg', 'file', 'a sign: Istanbul ferry', '2005-03-10\nNIKON', Date.parse('2005-03-10T09:00:00Z'));
    yield* add(2, '', 'song.mp3', 'file', null, 'Zeki Müren\nKalamış');
  });
}

const actor = (storages: Array<[number, string]>, scoped?: number) =>
  ({
    actor: { kind: 'person' },
    visible: () => storages.map(([id, name]) => ({ storage: { id, tenant_id: 1, name, driver: 'local', read_only: 0 }, level: 'editor' })),
    target: (p: string) => ({ storage: { id: scoped }, rel: p.split('/').slice(2).join('/'), level: 'editor' }),
  }) as unknown as ActorFiles;

describe('search on the pool (PostgreSQL)', { skip: skip ?? false }, () => {
  let cluster: PgCluster;
  let pg: Db;
  let lite: Db;
  const dir = tempDir('filedock-search-');

  before(async () => {
    cluster = await startPostgres();
    pg = await openPostgresDatabase(await cluster.createDatabase('search'));
    lite = openDatabase(`${dir.dir}/db.sqlite`);
    await fill(pg);
    await fill(lite);
  });
  after(async () => {
    await pg?.close();
    await lite?.close();
    await cluster?.destroy();
    dir.cleanup();
  });

  const both = actor([
    [1, 'Docs'],
    [2, 'Other'],
  ]);
  const cases: Array<[string, ActorFiles, SearchInput]> = [
    ['many hits, total past the limit', both, { q: 'report', limit: 50 }],
    ['a body match', both, { q: 'quarterly', limit: 10 }],
    ['no hit', both, { q: 'nothing-like-it', limit: 10 }],
    ['files under a folder', actor([[1, 'Docs']], 1), { q: 'port-1', type: 'file', path: '/Docs/reports', limit: 20 }],
    ['a short query and filters', both, { q: 'un', ext: ['pdf'], min_size: 1, limit: 5 }],
    ['metadata hits beside a body hit', both, { q: 'istanbul', limit: 10 }],
    ['a term in the metadata, one in the name', both, { q: 'nikon img_', limit: 10 }],
    ['the longest term in the text only, the other in the name only', both, { q: 'quarterly notes', limit: 10 }],
    ['two terms in the text, one in the name', both, { q: 'quarterly late notes', limit: 10 }],
    ['a metadata exclusion', both, { q: 'istanbul -canon', limit: 10 }],
    ['an artist', both, { q: 'Müren', limit: 10 }],
    ['taken from, alone', both, { q: '', taken_from: Date.parse('2010-01-01'), limit: 10 }],
    ['taken between, with a query', both, { q: 'img', taken_from: Date.parse('2000-01-01'), taken_to: Date.parse('2019-06-01T11:22:00Z'), limit: 10 }],
  ];

  test('one statement answers what SQLite answers: entries, order, total', async () => {
    const onReader = new SearchService(pg);
    const onSqlite = new SearchService(lite);
    for (const [what, fa, input] of cases) {
      const [r, l] = [await onReader.search(fa, input), await onSqlite.search(fa, input)];
      assert.deepEqual({ ...r, entriesJson: JSON.parse(r.entriesJson) }, { ...l, entriesJson: JSON.parse(l.entriesJson) }, `${what}: PostgreSQL = SQLite`);
    }
    const meta = JSON.parse((await onReader.search(both, { q: 'istanbul', limit: 10 })).entriesJson) as Array<{ name: string; match: string }>;
    assert.deepEqual(
      meta.map((e) => [e.name, e.match]),
      [
        ['IMG_0001.jpg', 'metadata'],
        ['IMG_0002.jpg', 'content'],
      ],
    );
    const taken = JSON.parse((await onReader.search(both, { q: '', taken_from: Date.parse('2010-01-01'), limit: 10 })).entriesJson) as Array<{ name: string }>;
    assert.deepEqual(
      taken.map((e) => e.name),
      ['IMG_0001.jpg'],
    );
    const many = await onReader.search(both, { q: 'report', limit: 50 });
    const entries = JSON.parse(many.entriesJson) as Array<{ path: string; type: string }>;
    assert.equal(many.total, FILES + 4, 'every match counted, not just the page');
    assert.equal(entries.length, 50);
    assert.deepEqual(
      entries.slice(0, 4).map((e) => `${e.type} ${e.path}`),
      ['dir /Docs/Report-archive', 'dir /Docs/reports', 'file /Docs/reports/notes.txt', 'file /Docs/report-0.pdf'],
    );
  });

  test('the event loop runs while PostgreSQL searches', async () => {
    const search = new SearchService(pg);
    const first = await Promise.race([
      search.search(both, { q: 'report', limit: 1000 }).then(() => 'search'),
      new Promise((r) => setImmediate(() => r('event loop'))),
    ]);
    assert.equal(first, 'event loop');
  });

  test('the trigram indexes a search reads keep their pending lists short (512 kB)', async () => {
    const rows = await pg.async.sql<{ relname: string; reloptions: string[] | null }>(
      "SELECT relname, reloptions FROM pg_class WHERE relname IN ('search_fts_body_trgm', 'search_fts_meta_trgm', 'nodes_name_trgm') ORDER BY relname",
      {},
    );
    assert.deepEqual(
      rows.map((r) => [r.relname, r.reloptions]),
      ['nodes_name_trgm', 'search_fts_body_trgm', 'search_fts_meta_trgm'].map((i) => [i, ['gin_pending_list_limit=512']]),
    );
  });
});
