import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PowerGuard, PowerReporter, powerMessage, USER_IDLE_AFTER_S, type PowerSaveSurface } from './power';
import type { PowerHostMessage } from './types';

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

test('powerMessage: on battery or mains; the user away after two minutes without input or while locked', () => {
  assert.deepEqual(powerMessage({ onBattery: true, idleSeconds: 0, locked: false }), { type: 'power', on_battery: true, user_idle: false });
  assert.deepEqual(powerMessage({ onBattery: false, idleSeconds: USER_IDLE_AFTER_S - 1, locked: false }), { type: 'power', on_battery: false, user_idle: false });
  assert.deepEqual(powerMessage({ onBattery: false, idleSeconds: USER_IDLE_AFTER_S, locked: false }), { type: 'power', on_battery: false, user_idle: true });
  assert.deepEqual(powerMessage({ onBattery: false, idleSeconds: 3, locked: true }), { type: 'power', on_battery: false, user_idle: true });
});

test('PowerReporter: sleep at suspend, wake then a fresh report at resume, and only changes in between', () => {
  const os = { battery: false, idle: 0 };
  const sent: PowerHostMessage[] = [];
  const r = new PowerReporter({ isOnBatteryPower: () => os.battery, getSystemIdleTime: () => os.idle }, (m) => sent.push(m));
  r.report();
  r.handle('poll');
  assert.deepEqual(sent, [{ type: 'power', on_battery: false, user_idle: false }], 'an unchanged poll sends nothing');
  os.battery = true;
  r.handle('on-battery');
  r.handle('lock-screen');
  os.idle = 500;
  r.handle('poll');
  r.handle('suspend');
  os.battery = false;
  os.idle = 0;
  r.handle('resume');
  r.handle('unlock-screen');
  r.handle('unlock-screen');
  assert.deepEqual(sent.slice(1), [
    { type: 'power', on_battery: true, user_idle: false },
    { type: 'power', on_battery: true, user_idle: true },
    { type: 'sleep' },
    { type: 'wake' },
    { type: 'power', on_battery: false, user_idle: true },
    { type: 'power', on_battery: false, user_idle: false },
  ]);
});
