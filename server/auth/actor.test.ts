import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_TENANT } from '../db';
import { actorSpec, actorTenant, systemActor } from './actor';
import { actorRestorer } from './actor-restorer';
import type { Keys } from './keys';
import type { UsersRepo } from './users.repo';

test('a system actor bound to a tenant acts in it, and its op resumes in it; an unbound one is tenant 1’s as before', async () => {
  const bound = systemActor('app-wakeup', { tenant_id: 2 });
  assert.deepEqual(actorTenant(bound), { tenant_id: 2 });
  assert.deepEqual(actorSpec(bound), { kind: 'system', job: 'app-wakeup', tenant_id: 2 });
  const free = systemActor('trash.sweep');
  assert.equal(actorTenant(free), DEFAULT_TENANT);
  assert.deepEqual(actorSpec(free), { kind: 'system', job: 'trash.sweep' });
  // A system actor reads no account or key: the restorer never asks them.
  const restorer = actorRestorer({} as UsersRepo, {} as Keys);
  assert.deepEqual(await restorer.restore(actorSpec(bound)), bound);
  assert.deepEqual(await restorer.restore(actorSpec(free)), free);
});
