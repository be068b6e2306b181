import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { DEFAULT_TENANT, openDatabase } from '../db';
import { EventBus } from '../events';
import { AppError } from '../errors';
import { tempDir } from '../../test/helpers/tools';
import { NodesRepo } from './nodes.repo';
import { WriteGate } from './write-gate';
import { FileLocks, lockTokenHash } from './file-locks';
import { AppStates, MAX_APP_STATE } from './app-state';

/** A real database with one storage and a few catalogued files. */
async function setup() {
  const t = tempDir('filedock-locks-');
  const db = openDatabase(join(t.dir, 'db.sqlite'));
  db.sqlite.prepare("INSERT INTO storages (id, uid, name, driver, config, created_at, updated_at) VALUES (1, 'st1', 'Docs', 'local', '{}', '', '')").run();
  const nodes = new NodesRepo(db);
  await db.async.unit(function* (t) {
    for (const p of ['a.pdf', 'f/b.pdf', 'f/c.txt', 'g/d.txt', '😀.txt'])
      yield* nodes.ensureParentsIn(t, { id: 1, tenant_id: 1 }, p),
        yield* nodes.upsertIn(t, { id: 1, tenant_id: 1 }, p, { name: p, type: 'file', size: 3, mtime: 1 });
  });
  const bus = new EventBus(db);
  const changed: string[] = [];
  bus.on('folder.changed', (e) => void changed.push(`${e.folder}|${e.path}`));
  const locks = new FileLocks(
    db,
    bus,
    { ofAnyTenant: (id: number) => (id === 1 ? { id, name: 'Docs', ...DEFAULT_TENANT } : undefined), everyTenant: () => [DEFAULT_TENANT] },
    () => {},
  );
  await locks.start();
  // Wired as createCatalogue wires it: moves and removals in a storage holding a lock re-read the locks.
  const follow = (sid: number) => locks.treeChanged(sid);
  const gate = new WriteGate(
    db,
    nodes,
    bus,
    (id) => ({ id, tenant_id: 1, name: 'Docs' }),
    () => {},
    { moved: { locks: follow }, removed: { locks: follow } },
  );
  const state = new AppStates(db, nodes, bus, (id) => ({ id, tenant_id: 1, name: 'Docs' }));
  return {
    db,
    nodes,
    gate,
    locks,
    state,
    changed,
    async close() {
      locks.stop();
      await db.close();
      t.cleanup();
    },
  };
}

const refusal = (fn: () => unknown): AppError => {
  try {
    fn();
  } catch (e) {
    if (e instanceof AppError) return e;
    throw e;
  }
  assert.fail('expected a refusal');
};

const sign = { plugin: 'sign', label: 'Fill and sign', reason: 'signing', reason_text: 'Out for signature' };

test('a lock refuses everyone but its holder, with the spec’s details, and clears', async () => {
  const s = await setup();
  try {
    assert.equal(s.locks.any(1), false, 'no lock: listings skip the join');
    s.locks.check(1, 'a.pdf');
    const { token, lock } = await s.locks.set(1, 'a.pdf', sign, { id: 7, email: 'x@example.test' });
    assert.equal(s.locks.any(1), true);
    assert.deepEqual(s.changed, ['|a.pdf'], 'the folder hears of it (page caches, browsers)');
    assert.equal(lock.locked_by, 7);
    const e = refusal(() => s.locks.check(1, 'a.pdf'));
    assert.equal(e.code, 'locked');
    assert.deepEqual(e.details, {
      plugin: 'sign',
      plugin_label: 'Fill and sign',
      path: '/Docs/a.pdf',
      reason: 'signing',
      reason_text: 'Out for signature',
      until: null,
    });
    s.locks.check(1, 'a.pdf', [lockTokenHash(token)]);
    assert.equal(refusal(() => s.locks.check(1, 'a.pdf', [lockTokenHash('someone-else')])).code, 'locked');
    s.locks.check(1, 'f/b.pdf');

    // Another app cannot take or clear it; the holder's app may lock again (a new token).
    await assert.rejects(s.locks.set(1, 'a.pdf', { ...sign, plugin: 'convert' }, null), (x: AppError) => x.code === 'locked');
    await assert.rejects(s.locks.clear(1, 'a.pdf', 'convert'), (x: AppError) => x.code === 'locked');
    const again = await s.locks.set(1, 'a.pdf', { ...sign, reason_text: null }, null);
    assert.equal(refusal(() => s.locks.check(1, 'a.pdf', [lockTokenHash(token)])).code, 'locked', 'the old token is void');
    s.locks.check(1, 'a.pdf', [lockTokenHash(again.token)]);
    assert.equal(s.locks.of(1, 'a.pdf')?.reason_text, null);

    assert.equal(await s.locks.clear(1, 'a.pdf', 'sign'), true);
    assert.equal(await s.locks.clear(1, 'a.pdf', 'sign'), false);
    s.locks.check(1, 'a.pdf');
    assert.equal(s.locks.any(1), false, 'the last lock gone: the storage is lock-free again');
  } finally {
    await s.close();
  }
});

test('a folder holding a locked file refuses as a whole; a rename keeps the lock; a delete drops it', async () => {
  const s = await setup();
  try {
    const { token } = await s.locks.set(1, 'f/b.pdf', sign, null);
    const e = refusal(() => s.locks.checkTree(1, 'f'));
    assert.equal(e.details?.path, '/Docs/f/b.pdf', 'the refusal names the locked file inside');
    s.locks.checkTree(1, 'f', [lockTokenHash(token)]);
    s.locks.checkTree(1, 'g');
    assert.equal(refusal(() => s.locks.checkTree(1, '')).code, 'locked', 'the whole storage holds it too');
    await s.locks.set(1, '😀.txt', sign, null);
    assert.equal(s.locks.within(1, '').size, 2, 'names beyond the basic plane too');
    await s.locks.clear(1, '😀.txt', 'sign');
    assert.equal(s.locks.within(1, 'f').size, 1);

    // The write gate's rename re-keys the subtree and keeps node ids: the lock follows, checked from memory.
    await s.gate.moved(1, 'f', 'h', { name: 'h', type: 'dir', size: 0, mtime: 3 }, { origin: 'move' });
    assert.equal(s.locks.of(1, 'f/b.pdf'), null);
    s.locks.check(1, 'f/b.pdf');
    assert.equal(s.locks.of(1, 'h/b.pdf')?.plugin, 'sign');
    assert.equal(refusal(() => s.locks.check(1, 'h/b.pdf')).details?.path, '/Docs/h/b.pdf');

    // A file gone from the catalogue takes its lock with it (and a new file there is free).
    await s.gate.removed(1, 'h/b.pdf', {});
    await s.db.async.unit((t) => s.nodes.upsertIn(t, { id: 1, tenant_id: 1 }, 'h/b.pdf', { name: 'b.pdf', type: 'file', size: 1, mtime: 2 }));
    s.locks.check(1, 'h/b.pdf');
    assert.equal(s.locks.any(1), false, 'the last lock gone with its file');
    assert.equal(s.db.sqlite.prepare('SELECT count(*) FROM file_locks').pluck().get(), 0);
  } finally {
    await s.close();
  }
});

test('an expired lock is ignored at once and removed by its timer, which tells the folder', async () => {
  const s = await setup();
  try {
    const until = new Date(Date.now() + 400).toISOString();
    await s.locks.set(1, 'g/d.txt', { ...sign, until }, null);
    assert.equal(refusal(() => s.locks.check(1, 'g/d.txt')).details?.until, until);
    s.changed.length = 0;
    await new Promise((r) => setTimeout(r, 450));
    s.locks.check(1, 'g/d.txt'); // past `until`: ignored whether or not the timer ran yet
    for (let i = 0; i < 100 && s.changed.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(s.changed, ['g|g/d.txt']);
    assert.equal(s.db.sqlite.prepare('SELECT count(*) FROM file_locks').pluck().get(), 0);
    assert.equal(s.locks.any(1), false);
  } finally {
    await s.close();
  }
});

test('lock requests are checked field by field; only catalogued files can be locked', async () => {
  const s = await setup();
  try {
    const bad = async (input: object, field: string) =>
      assert.rejects(s.locks.set(1, 'a.pdf', { ...sign, ...input }, null), (e: AppError) => e.code === 'validation_failed' && e.params.field === field);
    await bad({ plugin: 'Not An Id' }, 'plugin');
    await bad({ label: '' }, 'label');
    await bad({ label: 'x\u0000' }, 'label');
    await bad({ reason: 'two words' }, 'reason');
    await bad({ reason_text: 'x'.repeat(501) }, 'reason_text');
    await bad({ until: 'tomorrow' }, 'until');
    await bad({ until: new Date(Date.now() - 1000).toISOString() }, 'until');
    await assert.rejects(s.locks.set(1, 'f', sign, null), (e: AppError) => e.code === 'validation_failed' && e.params.field === 'path');
    await assert.rejects(s.locks.set(1, 'nope.pdf', sign, null), (e: AppError) => e.code === 'not_found');
    assert.equal(s.db.sqlite.prepare('SELECT count(*) FROM file_locks').pluck().get(), 0);
  } finally {
    await s.close();
  }
});

test('app state: items per file up to 32, the 33rd refused, following a rename', async () => {
  const s = await setup();
  try {
    for (let i = 0; i < MAX_APP_STATE; i++) await s.state.set(1, 'a.pdf', i % 2 ? 'sign' : 'convert', `k${i}`, true);
    assert.equal((await s.state.of(1, 'a.pdf')).length, 32);
    await assert.rejects(s.state.set(1, 'a.pdf', 'sign', 'one-more', true), (e: AppError) => e.code === 'too_many' && e.params.max === 32);
    assert.equal((await s.state.set(1, 'a.pdf', 'sign', 'k1', true)).length, 32, 'an item already there is no new one');
    assert.equal((await s.state.set(1, 'a.pdf', 'sign', 'k1', false)).length, 31);
    assert.deepEqual(await s.state.set(1, 'a.pdf', 'sign', 'one-more', true).then((x) => x.at(-1)), 'sign:one-more');
    await assert.rejects(s.state.set(1, 'a.pdf', 'sign', 'Bad Key', true), (e: AppError) => e.code === 'validation_failed');
    await assert.rejects(s.state.set(1, 'zzz', 'sign', 'k', true), (e: AppError) => e.code === 'not_found');

    await s.state.set(1, 'f/b.pdf', 'sign', 'awaiting', true);
    await s.db.async.unit((t) => s.nodes.moveTreeIn(t, { id: 1, tenant_id: 1 }, 'f/b.pdf', 'g/b.pdf'));
    assert.deepEqual(await s.state.of(1, 'g/b.pdf'), ['sign:awaiting']);
    assert.deepEqual([...(await s.state.within(1, 'g'))], [['g/b.pdf', ['sign:awaiting']]]);
    await s.state.set(1, '😀.txt', 'sign', 'awaiting', true);
    assert.equal((await s.state.within(1, '')).size, 3, 'the whole storage, names beyond the basic plane too');
  } finally {
    await s.close();
  }
});
