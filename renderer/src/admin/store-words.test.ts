import { test } from 'node:test';
import assert from 'node:assert/strict';
import { translator } from '../i18n';
import { describeIn, lastErrorText, pageOf, storeRefusalText } from './store-words';

const en = translator('en');
const tr = translator('tr');

test('a refusal reads as the sentence for its details.reason, in the reader’s language', () => {
  const tampered = { code: 'store_signature', message: 'store_signature', details: { kind: 'app', reason: 'signature_bad' } };
  assert.equal(storeRefusalText(tampered, en), 'The store’s index does not match its signature: it was changed after it was signed.');
  assert.match(storeRefusalText(tampered, tr), /imzasıyla uyuşmuyor/);
  assert.equal(
    storeRefusalText({ code: 'store_unreachable', details: { kind: 'app', reason: 'http_status', status: 404 } }, en),
    'The store answered with an error. (HTTP 404)',
  );
  assert.equal(storeRefusalText({ code: 'app_store_disabled', message: 'off', details: {} }, en), 'The app store is turned off on this server.');
});

test('a reason this UI does not know falls back to the server’s message, never a raw code when there is a message', () => {
  assert.equal(storeRefusalText({ code: 'store_invalid', message: 'Something new', details: { reason: 'brand_new' } }, en), 'Something new');
  assert.equal(storeRefusalText(new Error('boom'), en), 'boom');
});

test('a connection’s last_error (`code: reason`) reads as its sentence; unknown text stays as kept', () => {
  assert.equal(lastErrorText('store_unreachable: timeout', en), 'The store did not answer in time.');
  assert.equal(lastErrorText('app_store_disabled: ', en), 'The app store is turned off on this server.');
  assert.equal(lastErrorText('Error: odd', en), 'Error: odd');
});

test('a description in the UI language, else English, else any', () => {
  const d = { en: 'Turns images into PDFs', tr: 'Resimleri PDF yapar' };
  assert.equal(describeIn(d, 'tr'), 'Resimleri PDF yapar');
  assert.equal(describeIn(d, 'de'), 'Turns images into PDFs');
  assert.equal(describeIn(d, 'tr-TR'), 'Resimleri PDF yapar');
  assert.equal(describeIn({ fr: 'Bonjour' }, 'tr'), 'Bonjour');
  assert.equal(describeIn({}, 'en'), '');
  assert.equal(describeIn(null, 'en'), '');
});

test('page arithmetic: the range shown and the neighbouring offsets', () => {
  assert.deepEqual(pageOf(0, 20, 0), { from: 0, to: 0, prev: null, next: null });
  assert.deepEqual(pageOf(0, 20, 45), { from: 1, to: 20, prev: null, next: 20 });
  assert.deepEqual(pageOf(40, 20, 45), { from: 41, to: 45, prev: 20, next: null });
  assert.deepEqual(pageOf(5, 20, 45), { from: 6, to: 25, prev: 0, next: 25 });
});
