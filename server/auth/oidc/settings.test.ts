import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { isAppError } from '../../errors';
import { decrypt } from '../../lib/crypto';
import { claimAt, identityOf } from './claims';
import { MASK, OIDC_DEFAULTS, merge, normalize, overlayEnv, view } from './settings';

const key = randomBytes(32);
const base = { ...OIDC_DEFAULTS, issuer: 'https://id.example.test/', client_id: 'fd' };
const refused = (fn: () => unknown, field: string) =>
  assert.throws(fn, (e) => isAppError(e) && e.code === 'validation_failed' && e.params.field === field, field);

test('normalize keeps known fields of the right type and defaults the rest', () => {
  const s = normalize({ issuer: 'https://x/', enabled: 'yes', scopes: 7, junk: 'x' });
  assert.equal(s.issuer, 'https://x/');
  assert.equal(s.enabled, true);
  assert.equal(s.scopes, 'openid email profile');
  assert.equal((s as unknown as Record<string, unknown>).junk, undefined);
});

test('merge checks every field; the secret is sealed, *** keeps it, empty clears it', () => {
  const a = merge(base, { client_secret: 's3cret' }, {}, key);
  assert.match(a.client_secret, /^enc:v1:/);
  assert.equal(decrypt(key, a.client_secret), 's3cret');
  assert.equal(merge(a, { client_secret: MASK }, {}, key).client_secret, a.client_secret);
  assert.equal(merge(a, { client_secret: '' }, {}, key).client_secret, '');
  assert.equal(view(a, {}, 'u').client_secret, '***');
  assert.equal(view(merge(a, { client_secret: '' }, {}, key), {}, 'u').client_secret, '');
  refused(() => merge(base, { issuer: 'ftp://x/' }, {}, key), 'issuer');
  refused(() => merge(base, { issuer: 'http://id.lan/' }, {}, key), 'issuer');
  assert.equal(merge(base, { issuer: 'http://127.0.0.1:9000/' }, {}, key).issuer, 'http://127.0.0.1:9000/');
  refused(() => merge(base, { scopes: 'email profile' }, {}, key), 'scopes');
  refused(() => merge(base, { email_claim: '' }, {}, key), 'email_claim');
  refused(() => merge(base, { redirect_url: 'https://fd.example.test/elsewhere' }, {}, key), 'redirect_url');
  refused(() => merge(base, { client_id: '' }, {}, key), 'client_id');
  assert.equal(merge(base, { client_id: '', issuer: '' }, {}, key).issuer, '', 'both cleared unconfigures');
});

test('environment values win at start and may only be sent unchanged', () => {
  const env = { issuer: 'https://env.example.test/', client_secret: 'from-env', label: 'Env' };
  const s = overlayEnv(base, env, key);
  assert.equal(s.issuer, env.issuer);
  assert.equal(decrypt(key, s.client_secret), 'from-env');
  assert.equal(overlayEnv(s, env, key), s, 'nothing to write when already applied');
  assert.deepEqual(view(s, env, 'u').env_managed, ['issuer', 'client_secret', 'label']);
  refused(() => merge(s, { label: 'Other' }, env, key), 'label');
  refused(() => merge(s, { client_secret: 'other' }, env, key), 'client_secret');
  assert.equal(merge(s, { label: 'Env', client_secret: 'from-env', admin_group: 'admins' }, env, key).admin_group, 'admins');
});

test('claims: names with dots, dotted paths, groups as list or string, verified only when true', () => {
  const c = { sub: 'u1', mail: 'A@x.test', 'https://x/groups': ['a'], realm_access: { roles: ['r1', 'r2', 'r1', '', 'x'.repeat(65)] }, email_verified: 'true' };
  assert.deepEqual(claimAt(c, 'https://x/groups'), ['a']);
  assert.deepEqual(claimAt(c, 'realm_access.roles'), c.realm_access.roles);
  assert.equal(claimAt(c, 'realm_access.none'), undefined);
  const id = identityOf(c, { ...base, email_claim: 'mail', groups_claim: 'realm_access.roles' });
  assert.deepEqual(id, { sub: 'u1', email: 'A@x.test', emailVerified: true, username: null, groups: ['r1', 'r2'] });
  assert.equal(identityOf({ sub: 'u', email_verified: 1 }, base).emailVerified, false);
  assert.deepEqual(identityOf({ sub: 'u', groups: 'solo' }, base).groups, ['solo']);
  assert.equal(identityOf({ sub: 'u' }, base).groups, null, 'absent claim: leave groups alone');
  assert.equal(identityOf({ sub: 'u', groups: ['g'] }, { ...base, groups_claim: '' }).groups, null, 'group sync off');
});
