import { test } from 'node:test';
import assert from 'node:assert/strict';
import { toAppError } from './errors';

/** Errors shaped as the AWS SDK throws them (name, message, $metadata, cause). */
const sdk = (name: string, status?: number, extra: Record<string, unknown> = {}) =>
  Object.assign(new Error(`${name} message`), { name, $metadata: { httpStatusCode: status }, ...extra });

test('session-level refusals become storage_unreachable with the backend sentence', () => {
  for (const name of ['InvalidAccessKeyId', 'SignatureDoesNotMatch', 'NoSuchBucket', 'ExpiredToken']) {
    const e = toAppError(sdk(name, name === 'NoSuchBucket' ? 404 : 403), 'a.txt');
    assert.equal(e.code, 'storage_unreachable', name);
    assert.equal(e.params.reason, `${name}: ${name} message`);
  }
});

test('missing keys become not_found, bad ranges range_not_satisfiable, AccessDenied permission_denied', () => {
  assert.equal(toAppError(sdk('NoSuchKey', 404), 'a').code, 'not_found');
  assert.equal(toAppError(sdk('NotFound', 404), 'a').code, 'not_found');
  assert.equal(toAppError(sdk('InvalidRange', 416), 'a').code, 'range_not_satisfiable');
  assert.equal(toAppError(sdk('AccessDenied', 403), 'a').code, 'permission_denied');
  assert.equal(toAppError(sdk('KeyTooLongError', 400), 'a').code, 'name_too_long');
});

test('network failures, deadlines and 5xx are unreachable; a caller abort is cancelled', () => {
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' });
  assert.match(String(toAppError(refused, 'a').params.reason), /^ECONNREFUSED/);
  const wrapped = Object.assign(new Error('socket hang up'), { cause: { code: 'ECONNRESET' } });
  assert.equal(toAppError(wrapped, 'a').code, 'storage_unreachable');
  assert.equal(toAppError(sdk('AbortError'), 'a', { deadlineMs: 30_000 }).params.reason, 'timed out after 30s');
  assert.equal(toAppError(sdk('InternalError', 500), 'a').code, 'storage_unreachable');
  const ctrl = new AbortController();
  ctrl.abort();
  assert.equal(toAppError(sdk('AbortError'), 'a', { callerSignal: ctrl.signal }).code, 'cancelled');
  assert.equal(toAppError(new TypeError('bug'), 'a').code, 'internal');
});
