import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { ConversationsRepo } from './conversations.repo';
import { UsersRepo } from '../auth/users.repo';
import { openTestDb, type TestDb } from '../../test/helpers/test-database';
import { asyncOnly } from '../../test/helpers/async-only';

let t: TestDb;
let repo: ConversationsRepo;
let users = 0;
before(async () => {
  t = await openTestDb();
  repo = new ConversationsRepo(asyncOnly(t.db));
});
after(() => t?.close());

/** A fresh account (conversations and prefs reference users). */
const account = async (): Promise<number> =>
  new UsersRepo(t.db).insert({ email: `a${++users}@example.com`, username: `a${users}`, role: 'user', password_hash: null });

test('conversations on db.async: per person, history saved whole, deleted one or all, swept by last use', async () => {
  const kai = await account();
  const viv = await account();
  const one = await repo.create(kai, 'First');
  const two = await repo.create(kai, 'Second');
  await repo.create(viv, 'Hers');
  // Rows carry their tenant (tenant 1 in single-tenant mode; docs/tenants.md).
  assert.deepEqual(await repo.get(kai, one.id), { ...one, tenant_id: 1 });
  assert.equal(await repo.get(viv, one.id), undefined, 'another person’s conversation reads as missing');
  await repo.saveMessages(one.id, [{ role: 'user', content: 'hello' }]);
  const saved = await repo.get(kai, one.id);
  assert.deepEqual(JSON.parse(saved!.messages), [{ role: 'user', content: 'hello' }]);
  assert.ok(saved!.last_used_at >= one.last_used_at);
  const list = await repo.list(kai);
  assert.deepEqual(list.map((c) => c.id).sort(), [one.id, two.id].sort());
  assert.ok(!('messages' in list[0]), 'the list leaves the histories out');
  assert.equal(await repo.delete(viv, one.id), 0, 'not hers to delete');
  assert.equal(await repo.delete(kai, two.id), 1);
  assert.equal(await repo.sweep(30, Date.parse(saved!.last_used_at) + 29 * 86_400_000), 0, 'used within the retention days');
  assert.equal(await repo.sweep(30, Date.parse(saved!.last_used_at) + 31 * 86_400_000), 2, 'kai’s and viv’s');
  assert.equal(await repo.delete(kai), 0);
});

test('steps: the waiting one, in order, by id; a decision or an undo raced by several requests is taken once', async () => {
  const kai = await account();
  const c = await repo.create(kai, 'Steps');
  const done = await repo.addStep({
    conversation_id: c.id,
    tool_call_id: 'c1',
    tool: 'mkdir',
    input: { path: '/Files/a' },
    status: 'done',
    undo: { kind: 'trash', path: '/Files/a' },
    result: 'ok',
  });
  const waiting = await repo.addStep({ conversation_id: c.id, tool_call_id: 'c2', tool: 'delete', input: { path: '/Files/b' }, status: 'pending' });
  assert.deepEqual(await repo.step(c.id, done.id), { ...done, tenant_id: 1 });
  assert.equal(await repo.step('conv_other', done.id), undefined);
  assert.equal((await repo.pending(c.id))?.id, waiting.id);
  assert.deepEqual(
    (await repo.steps(c.id)).map((s) => s.id),
    [done.id, waiting.id],
  );

  // Approve and reject at once (two tabs), twice each: exactly one decision lands.
  const decided = await Promise.all([
    repo.transition(waiting.id, 'pending', 'done', { undo: null, result: 'deleted' }),
    repo.transition(waiting.id, 'pending', 'rejected'),
    repo.transition(waiting.id, 'pending', 'done', { undo: null, result: 'deleted' }),
    repo.transition(waiting.id, 'pending', 'rejected'),
  ]);
  assert.equal(decided.filter(Boolean).length, 1, `one decision of four: ${decided.join()}`);
  assert.equal(await repo.pending(c.id), undefined);
  const after = await repo.step(c.id, waiting.id);
  assert.equal(after?.status, decided[0] || decided[2] ? 'done' : 'rejected');

  const undone = await Promise.all([1, 2, 3].map(() => repo.transition(done.id, 'done', 'undone')));
  assert.deepEqual(undone.filter(Boolean).length, 1, 'one undo of three');
  assert.equal(await repo.transition(done.id, 'undone', 'done'), true, 'a failed undo puts it back');
  assert.equal((await repo.step(c.id, done.id))?.undo, done.undo, 'the plan is kept when the patch leaves it out');
});

test('confirm-all: false until set, a boolean on both databases; two first choices at once leave one row', async () => {
  const kai = await account();
  assert.equal(await repo.confirmAll(kai), false);
  await Promise.all([repo.setConfirmAll(kai, true), repo.setConfirmAll(kai, true)]);
  assert.equal(await repo.confirmAll(kai), true);
  await repo.setConfirmAll(kai, false);
  assert.equal(await repo.confirmAll(kai), false);
});
