import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatDateSeconds, formatRelative } from './format';

test('formatDateSeconds keeps the seconds, so two saves in one minute read apart', () => {
  const a = formatDateSeconds('2026-12-05T08:30:12Z', 'en');
  const b = formatDateSeconds('2026-12-05T08:30:47Z', 'en');
  assert.notEqual(a, b);
  assert.match(a, /:12\b/);
  assert.equal(formatDateSeconds('nope', 'en'), '');
});

test('formatRelative says how long ago, in the reader language', () => {
  const now = Date.parse('2026-12-05T08:30:00Z');
  assert.equal(formatRelative('2026-12-05T08:28:00Z', 'en', now), '2 minutes ago');
  assert.equal(formatRelative('2026-12-05T08:29:58Z', 'en', now), '2 seconds ago');
  assert.equal(formatRelative('2026-12-05T05:30:00Z', 'en', now), '3 hours ago');
  assert.equal(formatRelative('2026-12-04T08:30:00Z', 'en', now), 'yesterday');
  assert.equal(formatRelative('2026-12-05T08:28:00Z', 'tr', now), '2 dakika önce');
  assert.equal(formatRelative(null, 'en', now), '');
});
