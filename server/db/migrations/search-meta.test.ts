import { test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { migrate } from '..';
import { MIGRATIONS } from '.';
import { searchMeta } from './20261206150000-search-meta';

test('search-meta: the FTS5 table gains `meta` with every name and body kept; existing photos and recordings wait for their metadata', () => {
  const db = new Database(':memory:');
  migrate(
    db,
    MIGRATIONS.filter((m) => m !== searchMeta),
  );
  const now = new Date().toISOString();
  db.prepare("INSERT INTO storages (uid, name, driver, created_at, updated_at) VALUES ('u1', 'S', 'local', ?, ?)").run(now, now);
  const node = db.prepare(
    "INSERT INTO nodes (storage_id, dir, name, path, type, size, mtime, sort_key, updated_at, deleted_at) VALUES (1, '', ?, ?, 'file', ?, 5, ?, ?, ?) RETURNING id",
  );
  const ids: Record<string, number> = {};
  for (const [path, size, deleted] of [
    ['IMG_1.JPG', 10, null],
    ['song.mp3', 10, null],
    ['clip.mov', 10, null],
    ['report.pdf', 10, null],
    ['empty.jpg', 0, null],
    ['gone.jpg', 10, now],
    ['.versions/old.jpg', 10, null],
    ['scan.png', 10, null],
  ] as const) {
    const name = path.slice(path.lastIndexOf('/') + 1);
    ids[path] = (node.get(name, path, size, name.toLowerCase(), now, deleted) as { id: number }).id;
    db.prepare('INSERT INTO search_fts (rowid, name, body) VALUES (?, ?, ?)').run(ids[path], name, path === 'report.pdf' ? 'the platypus invoice' : null);
  }
  // A picture read by OCR already: read again, its metadata with it.
  db.prepare("INSERT INTO text_extracts (node_id, state, size, mtime, chars, updated_at) VALUES (?, 'done', 10, 5, 40, ?)").run(ids['scan.png'], now);

  assert.deepEqual(migrate(db, MIGRATIONS), [searchMeta.name]);
  const waiting = (db.prepare("SELECT node_id FROM text_extracts WHERE state = 'pending' ORDER BY node_id").all() as Array<{ node_id: number }>).map(
    (r) => r.node_id,
  );
  assert.deepEqual(waiting, [ids['IMG_1.JPG'], ids['song.mp3'], ids['clip.mov'], ids['scan.png']]);
  assert.deepEqual(db.prepare("SELECT rowid FROM search_fts WHERE search_fts MATCH 'platypus'").all(), [{ rowid: ids['report.pdf'] }]);
  assert.equal((db.prepare('SELECT count(*) AS n FROM search_fts').get() as { n: number }).n, 8);
  db.prepare('UPDATE search_fts SET meta = ? WHERE rowid = ?').run('Canon EOS', ids['IMG_1.JPG']);
  assert.deepEqual(db.prepare('SELECT rowid FROM search_fts WHERE search_fts MATCH \'"canon"\'').all(), [{ rowid: ids['IMG_1.JPG'] }]);
  db.close();
});
