/** The permission decision order (spec Authentication 7) as a table. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decide, isPermission, type PermissionSubject } from './permissions';

const rows: Array<[string, PermissionSubject, string, 'viewer' | 'user' | 'admin' | undefined, boolean]> = [
  // 1. admin wins over everything, even a denying exception
  ['admin', { role: 'admin', exceptions: { 'files:write': false } }, 'files:write', undefined, true],
  ['admin, unknown app perm', { role: 'admin' }, 'app.sign.send', undefined, true],
  // 2. the person's exception beats the custom role and the built-in default
  ['exception allows', { role: 'viewer', exceptions: { 'files:write': true } }, 'files:write', undefined, true],
  ['exception denies', { role: 'user', customRole: { 'shares:write': true }, exceptions: { 'shares:write': false } }, 'shares:write', undefined, false],
  // 3. the custom role beats the built-in default
  ['custom role denies', { role: 'user', customRole: { 'files:write': false } }, 'files:write', undefined, false],
  ['custom role allows', { role: 'viewer', customRole: { 'shares:write': true } }, 'shares:write', undefined, true],
  ['custom role silent', { role: 'viewer', customRole: { 'shares:write': true } }, 'files:write', undefined, false],
  // 4. the built-in role's default
  ['user writes', { role: 'user' }, 'files:write', undefined, true],
  ['viewer reads', { role: 'viewer' }, 'files:read', undefined, true],
  ['viewer does not write', { role: 'viewer' }, 'files:write', undefined, false],
  ['viewer makes no links', { role: 'viewer' }, 'shares:write', undefined, false],
  ['assistant on for every role', { role: 'viewer' }, 'ai.assistant', undefined, true],
  // 5. the app's declared default, for app permissions only
  ['app default user, user', { role: 'user' }, 'app.sign.send', 'user', true],
  ['app default user, viewer', { role: 'viewer' }, 'app.sign.send', 'user', false],
  ['app default viewer, viewer', { role: 'viewer' }, 'app.sign.view', 'viewer', true],
  ['app default admin, user', { role: 'user' }, 'app.sign.manage', 'admin', false],
  ['app permission, exception first', { role: 'viewer', exceptions: { 'app.sign.send': true } }, 'app.sign.send', 'admin', true],
  ['app permission, custom role next', { role: 'user', customRole: { 'app.sign.send': false } }, 'app.sign.send', 'user', false],
  ['app permission without a default', { role: 'user' }, 'app.sign.send', undefined, false],
  // unknown ids are denied
  ['unknown permission', { role: 'user' }, 'files:destroy', 'user', false],
];

for (const [name, subject, permission, appDefault, want] of rows) {
  test(`decide: ${name}`, () => assert.equal(decide(subject, permission, appDefault), want));
}

test('permission ids: built-in and app ones are known, others are not', () => {
  assert.equal(isPermission('files:write'), true);
  assert.equal(isPermission('app.sign-pdf.send'), true);
  assert.equal(isPermission('app..x'), false);
  assert.equal(isPermission('files:destroy'), false);
});
