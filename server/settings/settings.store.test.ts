/**
 * The settings store: `get` answers from memory (read whole at start), writes are awaited, and a
 * read-decide-write of one value (`update`) is one unit, so two writers at once (two requests, two
 * instances: here two stores on one database) both keep their change.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { SettingsStore, type WebhookTargetSetting } from './settings.store';
import { openTestDb, type TestDb } from '../../test/helpers/test-database';

let t: TestDb;
before(async () => {
  t = await openTestDb();
});
after(() => t?.close());

const target = (id: string): WebhookTargetSetting => ({ id, url: `http://${id}.test`, events: [], secret: 's', enabled: true });

test('load reads every stored key once; set and seed are awaited and seen at once', async () => {
  const a = new SettingsStore(t.db);
  await a.load();
  assert.equal(a.get('trash_retention_days'), 30, 'the default before any write');
  await a.seed('trash_retention_days', 14);
  await a.seed('trash_retention_days', 99);
  assert.equal(a.get('trash_retention_days'), 14, 'a second seed keeps the first value');
  const heard: string[] = [];
  a.onChange((k) => heard.push(k));
  await a.set('trash_retention_days', 60);
  assert.equal(a.get('trash_retention_days'), 60);
  assert.deepEqual(heard, ['trash_retention_days']);
  await assert.rejects(a.set('trash_retention_days', 0), (e: any) => e.code === 'validation_failed');

  const b = new SettingsStore(t.db);
  await b.load();
  assert.equal(b.get('trash_retention_days'), 60, 'a store built later reads what was stored');
  await b.seed('trash_retention_days', 7);
  assert.equal(b.get('trash_retention_days'), 60, 'a lost seed takes the stored value');
});

test('updates of one value racing from two stores each start from the value the one before stored', async () => {
  const a = new SettingsStore(t.db);
  const b = new SettingsStore(t.db);
  await Promise.all([a.load(), b.load()]);
  const ids = ['w1', 'w2', 'w3', 'w4', 'w5', 'w6'];
  await Promise.all(ids.map((id, i) => (i % 2 ? a : b).update('webhook_targets', (all) => [...all, target(id)])));
  await a.load();
  assert.deepEqual(
    a
      .get('webhook_targets')
      .map((x) => x.id)
      .sort(),
    ids,
    'no target lost',
  );
  await assert.rejects(
    a.update('webhook_targets', () => {
      throw new Error('refused');
    }),
    /refused/,
  );
  await assert.rejects(
    a.update('backup_keep', () => 0),
    (e: any) => e.code === 'validation_failed',
    'the new value is checked',
  );
  assert.equal(a.get('webhook_targets').length, 6);
});
