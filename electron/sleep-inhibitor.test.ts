import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeReasons, parseInhibit, SleepInhibitor } from './sleep-inhibitor';
import type { PowerSaveSurface } from './power';

function fakePower() {
  let next = 1;
  const active = new Set<number>();
  const starts: string[] = [];
  const surface: PowerSaveSurface = {
    start: (type) => {
      starts.push(type);
      active.add(next);
      return next++;
    },
    stop: (id) => active.delete(id),
  };
  return { surface, active, starts };
}
const copy = [{ kind: 'files.transfer', count: 1 }];
const idle = { active: false, reasons: [] };

test('holds one blocker while the server asks, whatever the reasons, and releases when it says it is done', () => {
  const p = fakePower();
  let changes = 0;
  const s = new SleepInhibitor(p.surface, { onChange: () => changes++ });
  s.update({ active: true, reasons: copy });
  s.update({ active: true, reasons: [...copy, { kind: 'transfers', count: 3 }] });
  assert.equal(p.active.size, 1);
  assert.deepEqual(p.starts, ['prevent-app-suspension']);
  assert.deepEqual(s.reasons, [...copy, { kind: 'transfers', count: 3 }]);
  s.update(idle);
  assert.equal(p.active.size, 0);
  assert.equal(s.holding, false);
  assert.deepEqual(s.reasons, []);
  assert.ok(changes >= 3);
});

test('the hold is bounded; it re-arms only after the server said it is done; idle waiters follow the server, not the bound', async () => {
  const p = fakePower();
  const s = new SleepInhibitor(p.surface, { maxHoldMs: 40 });
  s.update({ active: true, reasons: copy });
  let idleNow = false;
  void s.whenIdle().then(() => (idleNow = true));
  await new Promise((r) => setTimeout(r, 80));
  assert.equal(s.holding, false, 'released at the bound');
  s.update({ active: true, reasons: copy });
  assert.equal(s.holding, false, 'not re-armed within the same stretch');
  assert.equal(idleNow, false, 'the copy still runs: an update must still wait');
  s.update(idle);
  await new Promise((r) => setImmediate(r));
  assert.equal(idleNow, true);
  s.update({ active: true, reasons: copy });
  assert.equal(s.holding, true, 'a new stretch holds again');
  s.release();
  assert.equal(p.active.size, 0);
  await s.whenIdle();
});

test('messages are checked like input; reasons read as a sentence', () => {
  assert.deepEqual(parseInhibit({ active: true, reasons: [{ kind: 'transfers', count: 2 }, { kind: 7, count: 1 }, { kind: 'x', count: -1 }, null] }), {
    active: true,
    reasons: [{ kind: 'transfers', count: 2 }],
  });
  assert.deepEqual(parseInhibit({ active: true, reasons: 'all' }), { active: false, reasons: [] }, 'active without a reason holds nothing');
  assert.deepEqual(parseInhibit({ active: 'yes', reasons: copy }), { active: false, reasons: copy });
  assert.equal(
    describeReasons([
      { kind: 'transfers', count: 1 },
      { kind: 'archive.extract', count: 2 },
      { kind: 'plugin.job', count: 1 },
    ]),
    '1 transfer, 2 extractions, 1 plugin.job',
  );
});
