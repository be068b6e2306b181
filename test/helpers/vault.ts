/**
 * Ciphertext of the right shapes for the vault's server tests (docs/vault.md): the server recognises them by
 * shape only, so random bytes in the FDV1 layout and base32 names stand in for the browser module's output.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { TestServer } from './server';

export const b64u = (n: number): string => randomBytes(n).toString('base64url');

/** An encrypted name: lowercase base32 of 2 + 12 + 16 + name bytes. */
export function encName(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz234567';
  return Array.from(randomBytes(56), (b) => alphabet[b & 31]).join('');
}

/** An FDV1 file of `size` bytes (header for key version `version`, random body). */
export function fdv1(size = 4096 + 94 + 16, version = 1): Buffer {
  const b = randomBytes(size);
  b.write('FDV1', 0, 'latin1');
  b[4] = 1;
  b[5] = 20;
  b.writeUInt32BE(version, 6);
  return b;
}

/** A vault's creation body with its proofs. */
export function vaultBody() {
  const auth = b64u(32);
  const recovery_auth = b64u(32);
  return {
    auth,
    recovery_auth,
    body: {
      kdf: { alg: 'argon2id', m: 65536, t: 3, p: 1, salt: b64u(16) },
      public_key: b64u(65),
      wrapped_private_key: b64u(12 + 138 + 16),
      recovery_wrapped_private_key: b64u(12 + 138 + 16),
      auth,
      recovery_auth,
    },
  };
}

/** Sets up `token`'s vault; returns its proofs. */
export async function makeVault(s: TestServer, token: string): Promise<{ auth: string; recovery_auth: string }> {
  const v = vaultBody();
  const r = await s.api('PUT', '/api/vault', { token, body: v.body });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return v;
}

/** Makes an encrypted folder at `path` with the caller alone at key version 1 (then `members`); returns its id. */
export async function makeEncryptedFolder(s: TestServer, token: string, path: string, members: number[] = []): Promise<number> {
  const r = await s.api('POST', '/api/vault/folders', { token, body: { path } });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  const me = (await s.api('GET', '/api/auth/me', { token })).body.user.id as number;
  const set = [me, ...members].map((user_id) => ({ user_id, wrapped_key: b64u(125) }));
  const m = await s.api('PUT', `/api/vault/folders/${r.body.folder.id}/members`, { token, body: { key_version: 1, members: set } });
  assert.equal(m.status, 200, JSON.stringify(m.body));
  return r.body.folder.id;
}
