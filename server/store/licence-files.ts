/**
 * The store's side of licences online (docs/app-store.md, "Licences online"),
 * all static files a store serves beside index.json:
 *   - `licenses/<sha256 of the purchase code>`: one licence token per sale.
 *     The buyer gets the purchase code; only who knows it can name the file.
 *   - `revocations.json` + `revocations.json.sig`: the licence ids the store
 *     revoked, signed like index.json.
 * Also what reads them: the path of a code and the list's format.
 */
import { createHash, randomBytes, sign, type KeyObject } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { signIndex, storeError } from './format';

export const LICENSES_DIR = 'licenses';
export const REVOCATIONS_FILE = 'revocations.json';
export const REVOCATIONS_FORMAT = 'filedock-revocations/1';
/** A list of a few thousand ids is ~100 KiB. */
export const REVOCATIONS_MAX_BYTES = 4 * 1024 * 1024;

/** Purchase codes as people type them: case and spaces or dashes between groups do not matter. */
export const normaliseCode = (code: string) => code.replace(/[\s-]/g, '').toUpperCase();

/** The file a purchase code names under `licenses/`. */
export const licenceFile = (code: string) => `${LICENSES_DIR}/${createHash('sha256').update(normaliseCode(code)).digest('hex')}`;

const revocations = z
  .object({
    format: z.literal(REVOCATIONS_FORMAT),
    generated_at: z.string().max(40),
    revoked: z.array(z.object({ id: z.string().min(1).max(200), at: z.string().max(40).optional() }).strict()).max(200_000),
  })
  .strict();
export type RevocationList = z.infer<typeof revocations>;

/** Reads a (verified) revocations.json; `store_invalid` with the first problem. */
export function parseRevocations(bytes: Buffer): RevocationList {
  let raw: unknown;
  try {
    raw = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw storeError('store_invalid', 'bad_revocations', { detail: `${REVOCATIONS_FILE} is not JSON` });
  }
  const r = revocations.safeParse(raw);
  if (!r.success) {
    const first = r.error.issues[0];
    throw storeError('store_invalid', 'bad_revocations', { detail: `${first.path.join('.') || 'list'}: ${first.message}` });
  }
  return r.data;
}

/** A licence token: base64url(payload JSON) "." base64url(Ed25519 signature of that text) (docs/app-plugins.md, "Licences"). */
export function signLicence(key: KeyObject, payload: Record<string, unknown>): string {
  const body = Buffer.from(JSON.stringify({ v: 1, ...payload })).toString('base64url');
  return `${body}.${sign(null, Buffer.from(body, 'ascii'), key).toString('base64url')}`;
}

/** A new purchase code: 20 characters of Crockford base32 in groups of five (100 bits). */
export function newPurchaseCode(): string {
  const alphabet = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  const chars = [...randomBytes(20)].map((b) => alphabet[b & 31]).join('');
  return chars.match(/.{5}/g)!.join('-');
}

/** Writes one sale's licence into the store folder: the token under the code's file. */
export async function issueLicence(dir: string, key: KeyObject, payload: Record<string, unknown>): Promise<{ code: string; token: string; file: string }> {
  const token = signLicence(key, payload);
  const code = newPurchaseCode();
  const file = licenceFile(code);
  await mkdir(join(dir, LICENSES_DIR), { recursive: true });
  await writeFile(join(dir, file), `${token}\n`, { flag: 'wx' });
  return { code, token, file };
}

/** Adds licence ids to the store's revocation list (kept: those already there) and signs it again. */
export async function revokeLicences(dir: string, key: KeyObject, ids: readonly string[]): Promise<RevocationList> {
  let list: RevocationList = { format: REVOCATIONS_FORMAT, generated_at: '', revoked: [] };
  try {
    list = parseRevocations(await readFile(join(dir, REVOCATIONS_FILE)));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  const at = new Date().toISOString();
  const have = new Set(list.revoked.map((r) => r.id));
  list = { ...list, generated_at: at, revoked: [...list.revoked, ...ids.filter((id) => !have.has(id)).map((id) => ({ id, at }))] };
  const bytes = Buffer.from(`${JSON.stringify(list, null, 1)}\n`);
  await writeFile(join(dir, REVOCATIONS_FILE), bytes);
  await writeFile(join(dir, `${REVOCATIONS_FILE}.sig`), signIndex(bytes, key));
  return list;
}
