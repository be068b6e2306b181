import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { docKey, keyParts } from './signing';

const secret = randomBytes(32);

test('a document key names its node and tenant, and changes with either', () => {
  const k = docKey(secret, { node: 42, tenant_id: 3 }, 'etag-1');
  assert.match(k, /^42-t3-[A-Za-z0-9.-]{22}$/);
  assert.deepEqual(keyParts(k), { node: 42, tenant_id: 3 });
  assert.notEqual(docKey(secret, { node: 42, tenant_id: 4 }, 'etag-1').slice(-22), k.slice(-22), 'the tenant is bound, not only written');
  assert.notEqual(docKey(secret, { node: 42, tenant_id: 3 }, 'etag-2'), k);
  assert.ok(k.length <= 128, 'within the document server’s key length');
  assert.equal(keyParts('42-x'), null);
  assert.equal(keyParts(`42-t3-${'a'.repeat(21)}`), null);
});

test('a key made before keys carried the tenant is read as tenant 1’s and rebuilt the same way', () => {
  // The earlier form, as the service made it: `<node>-<22>` over the node and the etag only.
  const before = `7-${createHmac('sha256', secret).update('docserver.key\n7\netag').digest('base64url').slice(0, 22).replace(/_/g, '.')}`;
  const parts = keyParts(before);
  assert.deepEqual(parts, { node: 7, tenant_id: 1, legacy: true });
  assert.equal(docKey(secret, parts!, 'etag'), before, 'an editing session open across the upgrade still matches its bytes');
  assert.notEqual(docKey(secret, { node: 7, tenant_id: 1 }, 'etag'), before, 'new keys carry the tenant');
});
