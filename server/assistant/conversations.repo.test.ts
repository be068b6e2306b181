import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { ConversationsRepo } from './conversations.repo';
import { UsersRepo } from '../auth/users.repo';
import { openTestDb, type TestDb } from '../../test/helpers/test-database';
import { asyncOnly } from '../../test/helpers/async-only';
import { DEFAULT_TENANT as T1, type TenantScope } from '../db';

let t: TestDb;
let repo: ConversationsRepo;
let users = 0;
before(async () => {
  t = await openTestDb();
  repo = new ConversationsRepo(asyncOnly(t.db));
});
after(() => t?.close());

/** A fresh account of tenant `s` (conversations and prefs reference users). */
const account = async (s: TenantScope = T1): Promise<number> =>
  new UsersRepo(t.db).insert(s, { email: `a${++users}@example.com`, username: `a${users}`, role: 'user', password_hash: null });

test('conversations on db.async: per person, history saved whole, deleted one or all, swept by last use', async () => {
  const kai = await account();
  const viv = await account();
  const one = await repo.create(T1, kai, 'First');
  const two = await repo.create(T1, kai, 'Second');
  await repo.create(T1, viv, 'Hers');
  // Rows carry their tenant (tenant 1 in single-tenant mode; docs/tenants.md).
  assert.deepEqual(await repo.get(T1, kai, one.id), { ...one, tenant_id: 1 });
  assert.equal(await repo.get(T1, viv, one.id), undefined, 'another person’s conversation reads as missing');
  await repo.saveMessages(one, [{ role: 'user', content: 'hello' }]);
  const saved = await repo.get(T1, kai, one.id);
  assert.deepEqual(JSON.parse(saved!.messages), [{ role: 'user', content: 'hello' }]);
  assert.ok(saved!.last_used_at >= one.last_used_at);
  const list = await repo.list(T1, kai);
  assert.deepEqual(list.map((c) => c.id).sort(), [one.id, two.id].sort());
  assert.ok(!('messages' in list[0]), 'the list leaves the histories out');
  assert.equal(await repo.delete(T1, viv, one.id), 0, 'not hers to delete');
  assert.equal(await repo.delete(T1, kai, two.id), 1);
  assert.equal(await repo.sweep(T1, 30, Date.parse(saved!.last_used_at) + 29 * 86_400_000), 0, 'used within the retention days');
  assert.equal(await repo.sweep(T1, 30, Date.parse(saved!.last_used_at) + 31 * 86_400_000), 2, 'kai’s and viv’s');
  assert.equal(await repo.delete(T1, kai), 0);
});

test('steps: the waiting one, in order, by id; a decision or an undo raced by several requests is taken once', async () => {
  const kai = await account();
  const c = await repo.create(T1, kai, 'Steps');
  const done = await repo.addStep(c, {
    tool_call_id: 'c1',
    tool: 'mkdir',
    input: { path: '/Files/a' },
    status: 'done',
    undo: { kind: 'trash', path: '/Files/a' },
    result: 'ok',
  });
  const waiting = await repo.addStep(c, { tool_call_id: 'c2', tool: 'delete', input: { path: '/Files/b' }, status: 'pending' });
  assert.deepEqual(await repo.step(c, done.id), { ...done, tenant_id: 1 });
  assert.equal(await repo.step({ ...c, id: 'conv_other' }, done.id), undefined);
  assert.equal((await repo.pending(c))?.id, waiting.id);
  assert.deepEqual(
    (await repo.steps(c)).map((s) => s.id),
    [done.id, waiting.id],
  );

  // Approve and reject at once (two tabs), twice each: exactly one decision lands.
  const decided = await Promise.all([
    repo.transition(waiting, 'pending', 'done', { undo: null, result: 'deleted' }),
    repo.transition(waiting, 'pending', 'rejected'),
    repo.transition(waiting, 'pending', 'done', { undo: null, result: 'deleted' }),
    repo.transition(waiting, 'pending', 'rejected'),
  ]);
  assert.equal(decided.filter(Boolean).length, 1, `one decision of four: ${decided.join()}`);
  assert.equal(await repo.pending(c), undefined);
  const after = await repo.step(c, waiting.id);
  assert.equal(after?.status, decided[0] || decided[2] ? 'done' : 'rejected');

  const undone = await Promise.all([1, 2, 3].map(() => repo.transition(done, 'done', 'undone')));
  assert.deepEqual(undone.filter(Boolean).length, 1, 'one undo of three');
  assert.equal(await repo.transition(done, 'undone', 'done'), true, 'a failed undo puts it back');
  assert.equal((await repo.step(c, done.id))?.undo, done.undo, 'the plan is kept when the patch leaves it out');
});

test('confirm-all: false until set, a boolean on both databases; two first choices at once leave one row', async () => {
  const kai = await account();
  assert.equal(await repo.confirmAll(T1, kai), false);
  await Promise.all([repo.setConfirmAll(T1, kai, true), repo.setConfirmAll(T1, kai, true)]);
  assert.equal(await repo.confirmAll(T1, kai), true);
  await repo.setConfirmAll(T1, kai, false);
  assert.equal(await repo.confirmAll(T1, kai), false);
});

test('tenants: another tenant’s conversation, steps and choice are neither found, listed, saved, deleted, swept, decided nor changed', async () => {
  const T2: TenantScope = { tenant_id: 2 };
  const kai = await account();
  const ann = await account(T2);
  const mine = await repo.create(T1, kai, 'Mine');
  const theirs = await repo.create(T2, ann, 'Theirs');
  assert.equal(theirs.tenant_id, 2);
  const step = await repo.addStep(mine, { tool_call_id: 'c1', tool: 'mkdir', input: {}, status: 'done', undo: { kind: 'trash', path: '/F/a' } });
  assert.equal(step.tenant_id, 1, 'a step carries its conversation’s tenant');
  const waiting = await repo.addStep(mine, { tool_call_id: 'c2', tool: 'delete', input: {}, status: 'pending' });

  // The same person id and conversation id named in the other tenant: missing.
  assert.equal(await repo.get(T2, kai, mine.id), undefined);
  assert.equal(await repo.get(T1, ann, theirs.id), undefined);
  assert.deepEqual(await repo.list(T2, kai), []);
  assert.deepEqual(
    (await repo.list(T2, ann)).map((c) => c.id),
    [theirs.id],
  );
  await repo.saveMessages({ ...mine, tenant_id: 2 }, [{ role: 'user', content: 'forged' }]);
  assert.equal((await repo.get(T1, kai, mine.id))?.messages, '[]', 'a save naming another tenant changes nothing');
  assert.equal(await repo.delete(T2, kai, mine.id), 0);
  assert.equal(await repo.delete(T2, kai), 0);

  // Steps through a reference naming another tenant: none found, none decided or undone.
  const forged = { ...mine, tenant_id: 2 };
  assert.equal(await repo.step(forged, step.id), undefined);
  assert.equal(await repo.pending(forged), undefined);
  assert.deepEqual(await repo.steps(forged), []);
  assert.equal(await repo.transition({ ...waiting, tenant_id: 2 }, 'pending', 'rejected'), false);
  assert.equal(await repo.transition({ ...step, tenant_id: 2 }, 'done', 'undone'), false);
  assert.equal((await repo.pending(mine))?.id, waiting.id, 'still waiting');
  assert.equal((await repo.step(mine, step.id))?.status, 'done');

  // The choice: set in tenant 1, neither read nor changed from tenant 2.
  await repo.setConfirmAll(T1, kai, true);
  assert.equal(await repo.confirmAll(T2, kai), false);
  await repo.setConfirmAll(T2, kai, false);
  assert.equal(await repo.confirmAll(T1, kai), true, 'an upsert naming another tenant leaves the row');

  // Retention runs tenant by tenant: tenant 2's sweep leaves tenant 1's old conversation.
  const later = Date.parse(mine.last_used_at) + 31 * 86_400_000;
  assert.equal(await repo.sweep(T2, 30, later), 1, 'tenant 2’s own');
  assert.equal((await repo.get(T1, kai, mine.id))?.id, mine.id);
  assert.equal(await repo.get(T2, ann, theirs.id), undefined);
  assert.ok((await repo.sweep(T1, 30, later)) >= 1);
  assert.equal(await repo.get(T1, kai, mine.id), undefined);
});
