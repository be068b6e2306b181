/**
 * Every licence status word (SPEC "App licence"), computed offline from a
 * real Ed25519-signed token: free, missing, valid, grace, grace_expired,
 * expired, invalid (format and signature), wrong_app, revoked,
 * seats_exhausted, unverified.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { issueLicense as issue } from '../../test/helpers/app-package';
import { decodeLicense, licenseStatus, type LicenseContext } from './license';
import type { InstalledApp } from './registry/apps.repo';

const store = generateKeyPairSync('ed25519');
const other = generateKeyPairSync('ed25519');
const pem = (k: KeyObject) => k.export({ type: 'spki', format: 'pem' }).toString();

const issueLicense = (payload: Record<string, unknown>, key: KeyObject = store.privateKey) => issue(key, payload);

const app = (license?: { required: boolean; store: string }) =>
  ({ id: 'paid', digest: 'd', manifest: { license, actions: [], views: [] } }) as unknown as InstalledApp;
const paid = app({ required: true, store: 'shop' });
const now = new Date('2026-11-27T10:00:00Z');
const ctx = (token: string | null, over: Partial<LicenseContext> = {}): LicenseContext => ({
  token,
  storeKeys: (s) => (s === 'shop' ? [pem(store.publicKey)] : []),
  revoked: () => false,
  users: () => 3,
  now,
  ...over,
});
const day = (n: number) => new Date(now.getTime() + n * 86_400_000).toISOString();

test('free: the manifest asks for no licence (even with a token set)', () => {
  assert.equal(licenseStatus(app(), ctx(null)).status, 'free');
  assert.equal(licenseStatus(app({ required: false, store: 'shop' }), ctx(issueLicense({}))).status, 'free');
});

test('missing, valid (with its dates), and updates_until reported', () => {
  assert.equal(licenseStatus(paid, ctx(null)).status, 'missing');
  const a = licenseStatus(paid, ctx(issueLicense({ valid_until: day(30), updates_until: day(10) })));
  assert.deepEqual(a, { status: 'valid', valid_until: day(30), updates_until: day(10) });
  assert.equal(licenseStatus(paid, ctx(issueLicense({}))).status, 'valid'); // no end date: perpetual
});

test('invalid: not a token, a changed payload, a signature by an untrusted key of the same store', () => {
  for (const t of ['nope', 'a.b.c', 'x.' + 'A'.repeat(86), '']) assert.equal(licenseStatus(paid, ctx(t || 'x')).status, 'invalid', t);
  const good = issueLicense({ seats: 5 });
  const [body, sig] = good.split('.');
  const forged = Buffer.from(Buffer.from(body, 'base64url').toString().replace('"seats":5', '"seats":500')).toString('base64url');
  assert.equal(licenseStatus(paid, ctx(`${forged}.${sig}`)).status, 'invalid');
  assert.equal(licenseStatus(paid, ctx(issueLicense({}, other.privateKey))).status, 'invalid');
  assert.equal(licenseStatus(paid, ctx(issueLicense({ seats: 0 }))).status, 'invalid'); // bad field
  assert.equal(decodeLicense(issueLicense({ valid_until: 'tomorrow' })), null);
});

test('unverified: no trusted key for the store, or a store other than the manifest names', () => {
  assert.equal(licenseStatus(paid, ctx(issueLicense({}), { storeKeys: () => [] })).status, 'unverified');
  assert.equal(licenseStatus(paid, ctx(issueLicense({ store: 'elsewhere' }), { storeKeys: () => [pem(store.publicKey)] })).status, 'unverified');
});

test('wrong_app and revoked', () => {
  assert.equal(licenseStatus(paid, ctx(issueLicense({ app: 'another' }))).status, 'wrong_app');
  assert.equal(licenseStatus(paid, ctx(issueLicense({ id: 'lic-9' }), { revoked: (id) => id === 'lic-9' })).status, 'revoked');
  assert.equal(licenseStatus(paid, ctx(issueLicense({ id: 'lic-8' }), { revoked: (id) => id === 'lic-9' })).status, 'valid');
});

test('expired, grace within grace_days, grace_expired after them', () => {
  assert.equal(licenseStatus(paid, ctx(issueLicense({ valid_until: day(-1) }))).status, 'expired');
  assert.equal(licenseStatus(paid, ctx(issueLicense({ valid_until: day(-1), grace_days: 0 }))).status, 'expired');
  const g = licenseStatus(paid, ctx(issueLicense({ valid_until: day(-3), grace_days: 7 })));
  assert.deepEqual(g, { status: 'grace', valid_until: day(-3) });
  assert.equal(licenseStatus(paid, ctx(issueLicense({ valid_until: day(-8), grace_days: 7 }))).status, 'grace_expired');
});

test('seats_exhausted: more people allowed the app than seats; the count is asked only when seats are set', () => {
  assert.equal(licenseStatus(paid, ctx(issueLicense({ seats: 2 }))).status, 'seats_exhausted');
  assert.equal(licenseStatus(paid, ctx(issueLicense({ seats: 3 }))).status, 'valid');
  let asked = 0;
  assert.equal(licenseStatus(paid, ctx(issueLicense({}), { users: () => ++asked })).status, 'valid');
  assert.equal(asked, 0);
});
