import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PowerGuard, type PowerSaveSurface } from './power';

function fakePower() {
  let next = 1;
  const active = new Set<number>();
  const surface: PowerSaveSurface = {
    start: () => {
      active.add(next);
      return next++;
    },
    stop: (id) => active.delete(id),
  };
  return { surface, active };
}
const idle = { transfers: 0, ops: 0, syncing: false };

test('holds one blocker while transfers or ops run, releases when they end; sync alone does not hold', () => {
  const p = fakePower();
  const changes: boolean[] = [];
  const g = new PowerGuard(p.surface, { onChange: (h) => changes.push(h) });
  g.update({ ...idle, syncing: true });
  assert.equal(g.holding, false);
  g.update({ transfers: 1, ops: 0, syncing: false });
  g.update({ transfers: 2, ops: 1, syncing: false });
  assert.equal(p.active.size, 1);
  g.update(idle);
  assert.equal(p.active.size, 0);
  assert.deepEqual(changes, [true, false]);
});

test('the hold is bounded, and re-arms only after activity returned to zero', async () => {
  const p = fakePower();
  const g = new PowerGuard(p.surface, { maxHoldMs: 50 });
  g.update({ transfers: 1, ops: 0, syncing: false });
  assert.equal(g.holding, true);
  await new Promise((r) => setTimeout(r, 80));
  assert.equal(g.holding, false);
  g.update({ transfers: 3, ops: 0, syncing: false });
  assert.equal(g.holding, false, 'a stuck busy stretch does not re-acquire');
  g.update(idle);
  g.update({ transfers: 1, ops: 0, syncing: false });
  assert.equal(g.holding, true);
  g.release();
  g.release();
  assert.equal(p.active.size, 0);
});
