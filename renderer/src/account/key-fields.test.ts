import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../api/client';
import { translator } from '../i18n';
import { keyError } from './key-fields';
import { signupProblem } from '../auth/signup-page';

const t = translator('en');
const refusal = (status: number, error: string, message: string, details: Record<string, unknown> = {}) =>
  new ApiError(status, { error, message, details }, null);

test("a refused key request is said in the form's words when the server names the field", () => {
  assert.equal(
    keyError(refusal(400, 'validation_failed', 'The field "root" is not valid.', { field: 'root', reason: 'no such folder' }), t).message,
    t('keys.err.root'),
  );
  assert.equal(keyError(refusal(400, 'validation_failed', 'x', { field: 'verbs', verb: 'files:delete' }), t).message, t('keys.err.verbs'));
  assert.equal(keyError(refusal(400, 'validation_failed', 'x', { field: 'expires_at' }), t).message, t('keys.err.expiry'));
  assert.equal(keyError(refusal(400, 'validation_failed', 'x', { field: 'label' }), t).message, t('keys.err.name'));
  assert.equal(
    keyError(refusal(403, 'session_required', 'This needs a browser session: an API key cannot do it.'), t).message,
    'This needs a browser session: an API key cannot do it.',
  );
});

test('sign-up refusals land under the field they name', () => {
  assert.deepEqual(signupProblem(refusal(409, 'email_taken', 'This e-mail address is already in use.', { field: 'email' }), t), {
    email: 'This e-mail address is already in use.',
  });
  assert.deepEqual(signupProblem(refusal(400, 'username_invalid', 'Usernames use 2 to 64 letters.', { field: 'username' }), t), {
    username: 'Usernames use 2 to 64 letters.',
  });
  assert.deepEqual(signupProblem(refusal(400, 'validation_failed', 'The field "password" is not valid.', { field: 'password' }), t), {
    password: 'At least 8 characters.',
  });
  assert.deepEqual(signupProblem(refusal(403, 'forbidden', 'You do not have permission for this.'), t), { form: t('signup.off') });
  assert.deepEqual(signupProblem(refusal(500, 'internal', 'Something went wrong on the server.'), t), { form: 'Something went wrong on the server.' });
});
