/** The manifest's `open` rules, `license` block and `released` day (docs/app-plugins.md, "Open rules", "Licences"). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseManifest } from './manifest';
import { sampleManifest } from '../../../test/helpers/app-package';

const refused = (over: Record<string, unknown>) => {
  try {
    parseManifest(JSON.stringify(sampleManifest(over)));
  } catch (e) {
    return (e as { details: { field: string; reason: string } }).details;
  }
  return null;
};
const views = [{ id: 'viewer', label: 'action.greet', placement: 'panel' }];

test('open rules: one of view/action that exists, at least one ext or mime, closed shape', () => {
  const m = parseManifest(
    JSON.stringify(
      sampleManifest({
        views,
        open: [
          { ext: ['md'], view: 'viewer', default: true },
          { mime: ['text/*'], action: 'greet', label: 'action.greet' },
        ],
      }),
    ),
  );
  assert.equal(m.open.length, 2);
  assert.deepEqual(parseManifest(JSON.stringify(sampleManifest())).open, []);
  assert.deepEqual(refused({ views, open: [{ ext: ['md'] }] }), { field: 'open[0]', reason: 'names exactly one of view or action' });
  assert.deepEqual(refused({ views, open: [{ ext: ['md'], view: 'viewer', action: 'greet' }] })?.field, 'open[0]');
  assert.deepEqual(refused({ views, open: [{ view: 'viewer' }] }), { field: 'open[0]', reason: 'names at least one ext or mime' });
  assert.deepEqual(refused({ open: [{ ext: ['md'], view: 'nope' }] })?.field, 'open[0].view');
  assert.deepEqual(refused({ open: [{ ext: ['md'], action: 'nope' }] })?.field, 'open[0].action');
  assert.deepEqual(refused({ views, open: [{ ext: ['MD!'], view: 'viewer' }] })?.field, 'open[0].ext[0]');
  assert.deepEqual(refused({ views, open: [{ ext: ['md'], view: 'viewer', handler: true }] }), { field: 'open[0].handler', reason: 'unknown field' });
});

test('license: {required, store}, both needed, nothing else', () => {
  assert.deepEqual(parseManifest(JSON.stringify(sampleManifest({ license: { required: true, store: 'shop' } }))).license, { required: true, store: 'shop' });
  assert.equal(refused({ license: { required: true } })?.field, 'license.store');
  assert.equal(refused({ license: { required: 'yes', store: 'shop' } })?.field, 'license.required');
  assert.deepEqual(refused({ license: { required: true, store: 'shop', price: 3 } }), { field: 'license.price', reason: 'unknown field' });
});

test('released: a real day YYYY-MM-DD, optional', () => {
  assert.equal(parseManifest(JSON.stringify(sampleManifest({ released: '2026-02-28' }))).released, '2026-02-28');
  assert.equal(parseManifest(JSON.stringify(sampleManifest())).released, undefined);
  for (const released of ['2026-02-30', '2026-2-28', '2026-02-28T00:00:00Z', 20260228])
    assert.equal(refused({ released })?.field, 'released', String(released));
});
