import { test } from 'node:test';
import assert from 'node:assert/strict';
import { translator } from './index';

test('counts pick the plural form by the language rules (Intl.PluralRules)', () => {
  const en = translator('en');
  assert.equal(en('files.items', { n: 1 }), '1 item');
  assert.equal(en('files.items', { n: 0 }), '0 items');
  assert.equal(en('files.items', { n: 2 }), '2 items');
  assert.equal(en('quota.used', { n: 1, used: '3 KB' }), '3 KB in 1 file');
  assert.equal(en('trash.restored', { n: 5 }), '5 items restored.');
  assert.equal(en('storage.test_ok', { n: 1 }), 'Connection works: 1 object seen.');
  assert.equal(en('storage.test_ok', { n: 3 }), 'Connection works: 3 objects seen.');
  assert.equal(en('settings.over_ttl', { n: 1 }), '1 live link outlives the ceiling.');
  assert.equal(en('settings.over_ttl', { n: 2 }), '2 live links outlive the ceiling.');
  // Turkish nouns stay singular after a number.
  const tr = translator('tr');
  assert.equal(tr('files.items', { n: 1 }), '1 öğe');
  assert.equal(tr('files.items', { n: 7 }), '7 öğe');
  // A key without a `.one` form is used as it is.
  assert.equal(en('files.delete_failed', { n: 1, first: 'x' }), '1 item could not be deleted: x');
});
