import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { signJwt, verifyJwt } from './jwt';

const key = randomBytes(32);
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
/** A token exactly as the hand-written signer before jose made them. */
const legacy = (claims: object, k = key, header: object = { alg: 'HS256', typ: 'JWT' }) => {
  const body = `${b64(header)}.${b64(claims)}`;
  return `${body}.${createHmac('sha256', k).update(body).digest('base64url')}`;
};

test('session tokens: round trip, old tokens still valid, expiry, tampering and other algorithms refused', async () => {
  const now = Math.floor(Date.now() / 1000);
  const claims = { sid: 'abc', sub: 7, iat: now, exp: now + 60 };
  const token = await signJwt(claims, key);
  assert.deepEqual(await verifyJwt(token, key), claims);
  assert.equal(token, legacy({ sid: 'abc', sub: 7, iat: now, exp: now + 60 }), 'same bytes as before the swap');
  assert.deepEqual(await verifyJwt(legacy(claims), key), claims, 'a session signed by an older build stays valid');
  assert.equal(await verifyJwt(token, randomBytes(32)), null, 'another key');
  assert.equal(await verifyJwt(await signJwt({ ...claims, exp: now - 1 }, key), key), null, 'expired');
  assert.equal(await verifyJwt(token, key, now + 60), null, 'expires at exp');
  const [h, p, s] = token.split('.');
  assert.equal(await verifyJwt(`${h}.${b64({ ...claims, sub: 1 })}.${s}`, key), null, 'tampered claims');
  assert.equal(await verifyJwt(`${b64({ alg: 'none', typ: 'JWT' })}.${p}.`, key), null, 'alg none');
  assert.equal(await verifyJwt(legacy(claims, key, { alg: 'HS512', typ: 'JWT' }), key), null, 'another algorithm');
  assert.equal(await verifyJwt(legacy({ sub: 7, iat: now, exp: now + 60 }), key), null, 'no sid');
  for (const junk of ['', 'a.b', 'a.b.c.d', '...']) assert.equal(await verifyJwt(junk, key), null, junk);
});
