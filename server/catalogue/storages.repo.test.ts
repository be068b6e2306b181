import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openDatabase } from '../db';
import { StoragesRepo, newUid } from './storages.repo';
import { tempDir } from '../../test/helpers/tools';

const row = (name: string) => ({
  uid: newUid(),
  name,
  driver: 'local',
  config: '{}',
  mount_path: '/',
  sync_mode: 'poll' as const,
  sync_interval_s: 900,
  enabled: 1,
  read_only: 0,
  rbac_enabled: 0,
  replica_target_id: null,
});

test('the in-memory storage rows follow this process’s writes at once and another process’s commits', async () => {
  const t = tempDir();
  const file = join(t.dir, 'db.sqlite');
  const db = openDatabase(file);
  const other = openDatabase(file); // stands for a CLI command run beside the server
  try {
    const repo = new StoragesRepo(db);
    const id = repo.insert(row('Photos'));
    assert.equal(repo.byNameOrUid('photos')?.id, id, 'names match case-insensitively, like NOCASE');
    const uid = repo.byId(id)!.uid;
    assert.equal(repo.byNameOrUid(uid)?.name, 'Photos');
    assert.ok(Object.isFrozen(repo.byId(id)), 'shared rows cannot be changed by a caller');

    repo.update(id, { name: 'Pictures' });
    assert.equal(repo.byNameOrUid('Photos'), undefined, 'a rename is seen by the next lookup');
    assert.equal(repo.byNameOrUid('PICTURES')?.id, id);
    // A write outside the repository (the syncer's own UPDATE) counts too.
    db.sqlite.prepare('UPDATE storages SET last_sync_at = ? WHERE id = ?').run('2026-11-27T00:00:00.000Z', id);
    assert.equal(repo.byId(id)?.last_sync_at, '2026-11-27T00:00:00.000Z');
    repo.replaceGrants(id, [{ user_id: null, group: 'staff', level: 'editor' }]);
    assert.deepEqual(
      repo.grants(id).map((g) => g.group),
      ['staff'],
    );

    const otherRepo = new StoragesRepo(other);
    const id2 = otherRepo.insert(row('Music'));
    await new Promise((r) => setTimeout(r, 5));
    assert.equal(repo.byNameOrUid('music')?.id, id2, 'another connection’s commit is seen');
    other.sqlite.prepare('DELETE FROM storages WHERE id = ?').run(id);
    await new Promise((r) => setTimeout(r, 5));
    assert.equal(repo.byId(id), undefined);
    assert.deepEqual(repo.grants(id), []);
    assert.deepEqual(
      repo.all().map((s) => s.name),
      ['Music'],
    );
  } finally {
    await other.close();
    await db.close();
    t.cleanup();
  }
});
