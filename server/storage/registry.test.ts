import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DriverRegistry } from './registry';
import { builtinDrivers } from './drivers';
import type { DriverModule } from './types';

const fake = (driver: string, fields: DriverModule['descriptor']['fields'] = []): DriverModule => ({
  descriptor: {
    driver,
    label: driver,
    i18n_key: `storage.${driver}.label`,
    fields,
    capabilities: {
      read: true,
      write: true,
      presign: false,
      multipart: false,
      presigned_multipart: false,
      move: false,
      copy: false,
      walk: false,
      watch: false,
      ranges: true,
      etag: false,
    },
  },
  create: () => {
    throw new Error('not built in this test');
  },
});

test('registers built-ins and plugins alike, lists descriptors in order', () => {
  const r = new DriverRegistry();
  for (const m of builtinDrivers) r.register(m);
  r.register(fake('plugin:demo'));
  assert.deepEqual(
    r.list().map((d) => d.driver),
    [...builtinDrivers.map((m) => m.descriptor.driver), 'plugin:demo'],
  );
  assert.equal(r.list()[0].driver, 'local');
  assert.equal(r.get('local')?.descriptor.fields[0].key, 'path');
  assert.equal(r.get('nope'), undefined);
});

test('refuses a duplicate driver and malformed descriptors', () => {
  const r = new DriverRegistry();
  r.register(fake('x'));
  assert.throws(() => r.register(fake('x')), /registered twice/);
  assert.throws(() => r.register(fake('y', [{ key: 'a', type: 'string', label: '', i18n_key: 'storage.y.a' }])), /label/);
  const field = (key: string, extra = {}) => ({ key, type: 'string' as const, label: key, i18n_key: `storage.z.${key}`, ...extra });
  assert.throws(() => r.register(fake('z', [field('a', { root: true }), field('b', { root: true })])), /more than one/);
  assert.throws(() => r.register(fake('w', [field('a'), field('b', { aliases: ['a'] })])), /declared twice/);
});

test('every built-in field has an English label and a storage.<driver>.<key> i18n key', () => {
  for (const m of builtinDrivers)
    for (const f of m.descriptor.fields) {
      assert.ok(f.label.length > 0);
      assert.equal(f.i18n_key, `storage.${m.descriptor.driver}.${f.key}`);
    }
});
