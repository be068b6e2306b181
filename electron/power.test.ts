import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PowerReporter, powerMessage, USER_IDLE_AFTER_S } from './power';
import type { PowerHostMessage } from './types';

test('powerMessage: on battery or mains; the user away after two minutes without input or while locked', () => {
  assert.deepEqual(powerMessage({ onBattery: true, idleSeconds: 0, locked: false }), { type: 'power', on_battery: true, user_idle: false });
  assert.deepEqual(powerMessage({ onBattery: false, idleSeconds: USER_IDLE_AFTER_S - 1, locked: false }), {
    type: 'power',
    on_battery: false,
    user_idle: false,
  });
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
