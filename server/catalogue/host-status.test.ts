import { test } from 'node:test';
import assert from 'node:assert/strict';
import { offlineHostStatus } from './host-status';
import type { OfflineStorage } from './volumes';
import type { StoragesHostMessage } from '../contract';

test('the tray hears of offline storages once per change, and a failing read sends nothing', () => {
  let now: OfflineStorage[] = [];
  let broken = false;
  const sent: StoragesHostMessage[] = [];
  const t = offlineHostStatus(
    () => {
      if (broken) throw new Error('database closed');
      return now;
    },
    (m) => sent.push(m),
  );
  t.tick();
  t.tick();
  assert.deepEqual(sent, [{ type: 'storages', offline: [] }], 'the first state is sent, a repeat is not');
  now = [{ storage_id: 3, name: 'USB', path: '/media/usb', reason: 'volume x is not mounted', volume_state: 'missing', volume_id: 'x' }];
  t.tick();
  broken = true;
  t.tick();
  broken = false;
  t.tick();
  assert.equal(sent.length, 2);
  assert.deepEqual(sent[1], { type: 'storages', offline: [{ name: 'USB', reason: 'volume x is not mounted', volume_state: 'missing' }] });
  now = [];
  t.tick();
  assert.deepEqual(sent[2], { type: 'storages', offline: [] });
});
