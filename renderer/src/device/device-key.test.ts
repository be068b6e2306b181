import { test, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { adoptPairingLink, authHeaders, deviceKey, forgetDeviceKey } from './device-key';

// A minimal localStorage for Node.
const mem = new Map<string, string>();
(globalThis as { localStorage?: unknown }).localStorage = {
  getItem: (k: string) => mem.get(k) ?? null,
  setItem: (k: string, v: string) => void mem.set(k, v),
  removeItem: (k: string) => void mem.delete(k),
};
const TOKEN = 'fdk_12_' + 'a'.repeat(43);

beforeEach(() => mem.clear());

test('a pairing link stores its token and leaves nothing of it in the address bar', () => {
  const replaced: unknown[] = [];
  assert.equal(adoptPairingLink({ pathname: '/pair', hash: `#${TOKEN}` }, { replaceState: (...a: unknown[]) => void replaced.push(a[2]) }), 'stored');
  assert.equal(deviceKey(), TOKEN);
  assert.deepEqual(replaced, ['/']);
  assert.deepEqual(authHeaders(), { Authorization: `Bearer ${TOKEN}` });
  forgetDeviceKey();
  assert.equal(deviceKey(), null);
  assert.deepEqual(authHeaders(), {});
});

test('a pairing link without a usable token stores nothing; other pages are left alone', () => {
  const replaced: unknown[] = [];
  const hist = { replaceState: (...a: unknown[]) => void replaced.push(a[2]) };
  for (const hash of ['', '#', '#not-a-key', '#fdk_1_short', `#${TOKEN}<script>`])
    assert.equal(adoptPairingLink({ pathname: '/pair', hash }, hist), 'bad', hash);
  assert.equal(deviceKey(), null);
  assert.equal(replaced.length, 5, 'every pairing link leaves the address bar');
  assert.equal(adoptPairingLink({ pathname: '/files', hash: `#${TOKEN}` }, hist), null);
  assert.equal(deviceKey(), null);
  assert.equal(replaced.length, 5);
});
