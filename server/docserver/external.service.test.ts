/**
 * The external services' rows are read once and kept: a write of this instance shows at once, a row
 * another instance changed shows after the keep time, read off the event loop while the kept row answers.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { openDatabase } from '../db';
import { ExternalServices } from './external.service';
import { tempDir } from '../../test/helpers/tools';

test('rows kept in memory: own writes at once, another writer after the keep time, no statement per ask', async () => {
  const dir = tempDir('filedock-external-');
  const db = openDatabase(`${dir.dir}/db.sqlite`);
  try {
    const ext = new ExternalServices(db, randomBytes(32), 50);
    await ext.load();
    assert.equal(ext.diagramUrl(), '');
    await ext.put('diagram', { url: 'https://draw.example.test' });
    assert.equal(ext.diagramUrl(), 'https://draw.example.test', 'this instance’s write shows at once');

    let reads = 0;
    const first = db.async.first.bind(db.async);
    db.async.first = ((q) => (reads++, first(q))) as typeof db.async.first;
    for (let i = 0; i < 100; i++) ext.diagramUrl();
    assert.equal(reads, 0, 'a kept row costs no statement');
    db.async.first = first;

    // Another instance changes the row behind this one.
    await db.async.sql("UPDATE external_services SET url = 'https://other.example.test' WHERE name = 'diagram'");
    assert.equal(ext.diagramUrl(), 'https://draw.example.test', 'the kept row answers meanwhile');
    let seen = '';
    for (let i = 0; i < 200 && seen !== 'https://other.example.test'; i++) {
      await new Promise((r) => setTimeout(r, 10));
      seen = ext.diagramUrl();
    }
    assert.equal(seen, 'https://other.example.test', 'the other writer’s row shows after the keep time');
  } finally {
    await db.close();
    dir.cleanup();
  }
});
