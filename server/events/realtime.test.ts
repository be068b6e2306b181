import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_TENANT } from '../db/tenant-tables';
import { RealtimeHub, RECENT_CHANGE_MS, type RealtimeFrame } from './realtime';

const frame = (name: string): RealtimeFrame => ({ event: 'change', data: { folder: '/home', kind: 'created', path: `/home/${name}`, name } });
const replayed = (name: string): RealtimeFrame => ({ event: 'change', data: { folder: '/home', kind: 'created', path: `/home/${name}`, name, recent: true } });
const subscriber = (folderKey: string | null, userId = 1, tenant_id = 1) => {
  const got: RealtimeFrame[] = [];
  return { got, s: { tenant_id, userId, isAdmin: false, folderKey, send: (f: RealtimeFrame) => got.push(f) } };
};

test('a connection opening a folder that changed moments ago gets that change at once; an older one or another folder gets nothing', () => {
  let now = 1_000_000;
  const hub = new RealtimeHub(() => now);
  assert.equal(hub.toFolder(DEFAULT_TENANT, '1:', frame('a.txt')), 0, 'nobody had the folder open');
  hub.toFolder(DEFAULT_TENANT, '1:', frame('b.txt'));

  const soon = subscriber('1:');
  hub.add(soon.s);
  assert.deepEqual(soon.got, [replayed('b.txt')], 'the last change, replayed and marked');

  const other = subscriber('1:docs');
  hub.add(other.s);
  assert.deepEqual(other.got, []);
  const elsewhere = subscriber('1:', 7, 2);
  hub.add(elsewhere.s);
  assert.deepEqual(elsewhere.got, [], "another tenant's connection gets no replay");

  now += RECENT_CHANGE_MS + 1;
  const late = subscriber('1:');
  hub.add(late.s);
  assert.deepEqual(late.got, [], 'a change older than RECENT_CHANGE_MS is not replayed');

  hub.toFolder(DEFAULT_TENANT, '1:', frame('c.txt'));
  assert.deepEqual(soon.got.at(-1), frame('c.txt'));
  assert.deepEqual(late.got, [frame('c.txt')], 'live frames as before');
});

test('the kept changes stay bounded: old ones are dropped as new ones come', () => {
  let now = 0;
  const hub = new RealtimeHub(() => now);
  for (let i = 0; i < 20_000; i++) hub.toFolder(DEFAULT_TENANT, `1:f${i}`, frame(String(i)));
  const first = subscriber('1:f0');
  hub.add(first.s);
  assert.deepEqual(first.got, [], 'past the bound, the oldest folder is forgotten');
  const last = subscriber('1:f19999');
  hub.add(last.s);
  assert.equal(last.got.length, 1);
  now += RECENT_CHANGE_MS + 1;
  hub.toFolder(DEFAULT_TENANT, '1:x', frame('x'));
  const again = subscriber('1:f19999');
  hub.add(again.s);
  assert.deepEqual(again.got, [], 'expired changes go on the next change');
});
