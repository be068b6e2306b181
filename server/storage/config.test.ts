import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { isEncrypted } from '../lib/crypto';
import { isAppError } from '../errors';
import { MASK, maskSecrets, mergeForUpdate, openSecrets, resolveConfig, rootIssue, sealSecrets } from './config';
import type { DriverModule } from './types';

const mod: DriverModule = {
  descriptor: {
    driver: 'demo',
    label: 'Demo',
    i18n_key: 'storage.demo.label',
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
    fields: [
      { key: 'host', type: 'string', required: true, label: 'Host', i18n_key: 'storage.demo.host' },
      { key: 'user', type: 'string', aliases: ['username'], label: 'User', i18n_key: 'storage.demo.user' },
      { key: 'password', type: 'password', secret: true, aliases: ['pass'], label: 'Password', i18n_key: 'storage.demo.password' },
      { key: 'port', type: 'int', default: 22, label: 'Port', i18n_key: 'storage.demo.port' },
      { key: 'insecure', type: 'bool', default: false, label: 'Insecure', i18n_key: 'storage.demo.insecure' },
      { key: 'root', type: 'string', root: true, default: '/', aliases: ['base_path'], label: 'Root', i18n_key: 'storage.demo.root' },
    ],
  },
  validate: (c) => (c.host === 'bad' ? [{ field: 'host', message: 'refused by the driver' }] : []),
  create: () => {
    throw new Error('unused');
  },
};

test('aliases map to canonical keys; defaults fill in; unknown keys pass through', () => {
  const { config, problems } = resolveConfig(mod, { host: 'h', username: 'ann', base_path: '/data', extra_thing: { a: 1 } });
  assert.deepEqual(problems, []);
  assert.deepEqual(config, { host: 'h', user: 'ann', root: '/data', port: 22, insecure: false, extra_thing: { a: 1 } });
  // The canonical key wins over an alias.
  assert.equal(resolveConfig(mod, { host: 'h', user: 'a', username: 'b', root: '/x' }).config.user, 'a');
});

test('coerces ints from numeric strings and bools from text, and reports bad values', () => {
  const ok = resolveConfig(mod, { host: 'h', port: '2222', insecure: '1', root: '/x' });
  assert.equal(ok.config.port, 2222);
  assert.equal(ok.config.insecure, true);
  assert.equal(resolveConfig(mod, { host: 'h', insecure: 'false', root: '/x' }).config.insecure, false);
  const bad = resolveConfig(mod, { host: 'h', port: '22x', insecure: 'maybe', root: '/x' });
  assert.deepEqual(
    bad.problems.map((p) => [p.field, p.kind]),
    [
      ['port', 'type'],
      ['insecure', 'type'],
    ],
  );
});

test('required fields become problems of kind "required" (the CLI only warns about those)', () => {
  const r = resolveConfig(mod, { host: '  ', root: '/x' });
  assert.deepEqual(r.problems, [{ field: 'host', message: 'is required', kind: 'required' }]);
  assert.equal('host' in r.config, false);
});

test('the root guard refuses empty, /, ., and any .. segment', () => {
  for (const v of ['', '/', '.', './', '//', '/a/../b', '..', 'a/..']) assert.ok(rootIssue(v), `accepted ${JSON.stringify(v)}`);
  for (const v of ['/srv/files', 'prefix', 'a/b/', '/a..b']) assert.equal(rootIssue(v), null, `refused ${v}`);
  // The default '/' of the demo's root field is itself refused.
  assert.deepEqual(
    resolveConfig(mod, { host: 'h' }).problems.map((p) => [p.field, p.kind]),
    [['root', 'root']],
  );
});

test("the module's own validate runs once the descriptor's rules pass", () => {
  assert.deepEqual(resolveConfig(mod, { host: 'bad', root: '/x' }).problems, [{ field: 'host', message: 'refused by the driver', kind: 'driver' }]);
  assert.deepEqual(
    resolveConfig(mod, 'nope').problems.map((p) => p.field),
    ['config'],
  );
});

test('secrets are sealed at rest, opened for the driver, masked for admins, kept on a *** update', () => {
  const key = randomBytes(32);
  const { config } = resolveConfig(mod, { host: 'h', pass: 's3cret', root: '/x' });
  const sealed = sealSecrets(mod.descriptor, config, key);
  assert.ok(isEncrypted(sealed.password));
  assert.equal(sealed.host, 'h');
  assert.equal(sealSecrets(mod.descriptor, sealed, key).password, sealed.password, 'already sealed stays');
  assert.equal(openSecrets(mod.descriptor, sealed, key).password, 's3cret');
  assert.deepEqual(maskSecrets(mod.descriptor, sealed), { ...sealed, password: MASK });
  assert.equal(maskSecrets(mod.descriptor, { pass: 'raw' }).pass, MASK);

  const kept = mergeForUpdate(mod.descriptor, sealed, { host: 'h2', password: MASK, root: '/x' });
  assert.equal(kept.password, sealed.password);
  assert.equal(kept.host, 'h2');
  assert.equal(mergeForUpdate(mod.descriptor, sealed, { host: 'h2', root: '/x' }).password, sealed.password, 'left out keeps');
  assert.equal(mergeForUpdate(mod.descriptor, sealed, { host: 'h2', pass: 'new' }).password, 'new', 'alias sets');
  assert.equal(mergeForUpdate(mod.descriptor, sealed, { host: 'h2', password: '' }).password, '', 'empty clears');
  assert.equal('password' in mergeForUpdate(mod.descriptor, {}, { password: MASK }), false, 'nothing stored: *** is not a secret');

  assert.throws(
    () => openSecrets(mod.descriptor, sealed, randomBytes(32)),
    (e) => isAppError(e) && e.code === 'storage_unavailable',
  );
});
