import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Share } from '../api/types';
import { linkStatus } from './link-status';

const base: Share = { id: 1, path: 'home://a', token: 't', url: 'u', expires_at: '2026-12-01T00:00:00Z', max_downloads: 3, downloads: 1 };
const now = Date.parse('2026-11-21T00:00:00Z');

test('link status from the row: used up (cap) is told apart from expired (date)', () => {
  assert.equal(linkStatus(base, now), 'active');
  assert.equal(linkStatus({ ...base, revoked_at: '2026-11-20T00:00:00Z' }, now), 'revoked');
  assert.equal(linkStatus({ ...base, expires_at: '2026-11-20T00:00:00Z' }, now), 'expired');
  assert.equal(linkStatus({ ...base, downloads: 3 }, now), 'used');
  // Both limits reached: the cap is what the owner needs to hear about.
  assert.equal(linkStatus({ ...base, downloads: 3, expires_at: '2026-11-20T00:00:00Z' }, now), 'used');
  assert.equal(linkStatus({ ...base, expires_at: null, max_downloads: null }, now), 'active');
  assert.equal(linkStatus({ ...base, suspended_at: '2026-11-20T00:00:00Z', suspended_reason: 'addresses' }, now), 'suspended');
  assert.equal(linkStatus({ ...base, suspended_at: '2026-11-20T00:00:00Z', revoked_at: '2026-11-20T00:00:00Z' }, now), 'revoked');
});

test('a file request whose file cap is spent reads as used up', () => {
  const drop: Share = { ...base, kind: 'drop', max_downloads: null, downloads: 0, max_uploads: 3, uploads: 2 };
  assert.equal(linkStatus(drop, now), 'active');
  assert.equal(linkStatus({ ...drop, uploads: 3 }, now), 'used');
});
