/**
 * The store format (docs/app-store.md, "Format"): a static folder holding
 * `index.json`, its detached signature `index.json.sig` and the packages the
 * index names. The signature is Ed25519 over the exact bytes of index.json,
 * written as `{"alg": "ed25519", "key": "<fingerprint>", "signature": "<base64>"}`;
 * the fingerprint (sha256 of the key's SPKI DER, hex) lets a reader tell "another
 * key signed this" (`key_changed`) from "these bytes were changed" (`signature_bad`).
 */
import { createHash, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { z } from 'zod';
import { AppError } from '../errors';
import { parseRange } from '../lib/versions';

export const INDEX_FILE = 'index.json';
export const SIGNATURE_FILE = 'index.json.sig';
export const STORE_FORMAT = 'filedock-store/1';
/** The spec's limit on a store's index (Limits: "Store catalogue"). */
export const INDEX_MAX_BYTES = 16 * 1024 * 1024;
export const SIGNATURE_MAX_BYTES = 4096;

export const KINDS = ['app', 'language-pack', 'storage'] as const;
export type StoreKind = (typeof KINDS)[number];

const id = z.string().regex(/^[a-z0-9][a-z0-9._-]{0,62}$/);
const semverText = z.string().regex(/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/);
const range = z
  .string()
  .max(256)
  .refine((r) => parseRange(r) !== null, 'not a version range');
/** A package file beside index.json (an app ZIP, a language pack JSON): a plain name, no folders, nothing that leaves the store. */
const fileName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,199}\.(zip|json)$/);

/** Pictures beside the packages (an entry's icon and screenshots): under `media/`, PNG, JPEG or WebP. */
const mediaFile = z.string().regex(/^media\/[A-Za-z0-9][A-Za-z0-9._-]{0,199}\.(png|jpe?g|webp)$/);
/** The spec's icon limit (Limits: "icon 5 MiB"); screenshots share it. */
export const MEDIA_MAX_BYTES = 5 * 1024 * 1024;
const media = z.strictObject({ file: mediaFile, size: z.number().int().min(1).max(MEDIA_MAX_BYTES), sha256: z.string().regex(/^[0-9a-f]{64}$/) });
/** The catalogue's categories (a fixed list, so every store files the same things under the same word). */
export const CATEGORIES = ['files', 'documents', 'media', 'productivity', 'security', 'integration', 'developer', 'language', 'storage'] as const;
export type StoreCategory = (typeof CATEGORIES)[number];
const langKey = z.string().regex(/^[a-z]{2,3}(-[A-Z]{2})?$/);

const version = z.strictObject({
  version: semverText,
  /** The Filedock versions the package runs on (the manifest's `filex_range`). */
  filedock_range: range,
  file: fileName,
  size: z.number().int().min(1),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  permissions: z.array(z.string().max(64)).max(32),
  released: z.string().max(10).optional(),
  /** A language pack's share of the English keys it translates, in percent (measured by the builder). */
  completeness: z.number().int().min(0).max(100).optional(),
});

const entry = z.strictObject({
  id,
  kind: z.enum(KINDS),
  name: z.string().min(1).max(200),
  publisher: id,
  /** The publisher's Ed25519 public key (SPKI PEM), shown to compare; the admin still trusts it themselves. */
  publisher_key: z.string().max(4096).optional(),
  /** Description by language (`en`, `tr`, ...). */
  description: z.record(langKey, z.string().max(4000)),
  license: z.strictObject({ model: z.enum(['free', 'paid']), store: id.optional() }),
  versions: z.array(version).min(1).max(200),
  categories: z.array(z.enum(CATEGORIES)).max(4).optional(),
  icon: media.optional(),
  /** Pictures of the app at work, with a caption by language. */
  screenshots: z
    .array(media.extend({ caption: z.record(langKey, z.string().max(300)) }))
    .max(8)
    .optional(),
});

const index = z.strictObject({
  format: z.literal(STORE_FORMAT),
  name: z.string().min(1).max(200),
  generated_at: z.string().max(40),
  entries: z.array(entry).max(100_000),
});

export type StoreIndex = z.infer<typeof index>;
export type StoreEntry = z.infer<typeof entry>;
export type StoreVersion = z.infer<typeof version>;

/** A `store_*` refusal (502: the store, not the caller, is at fault) with the spec's `kind` and `reason`. */
export const storeError = (
  code: 'store_unreachable' | 'store_signature' | 'store_invalid' | 'store_sha_mismatch',
  reason: string,
  extra: Record<string, string | number> = {},
  kind: StoreKind = 'app',
) => new AppError(code, { reason, ...extra }, { kind, reason, ...extra });

/** The key's fingerprint: sha256 of its SPKI DER, lower-case hex. Refuses anything but an Ed25519 public key. */
export function fingerprint(pem: string): string {
  let key: KeyObject;
  try {
    key = createPublicKey(pem);
  } catch {
    throw new AppError('validation_failed', { field: 'public_key_pem', reason: 'not a PEM public key' }, { field: 'public_key_pem' });
  }
  if (key.asymmetricKeyType !== 'ed25519')
    throw new AppError('validation_failed', { field: 'public_key_pem', reason: 'must be an Ed25519 key' }, { field: 'public_key_pem' });
  return createHash('sha256')
    .update(key.export({ type: 'spki', format: 'der' }))
    .digest('hex');
}

/** The detached signature of `bytes` (index.json) by the store's private key. */
export function signIndex(bytes: Buffer, privateKey: KeyObject): string {
  const pem = createPublicKey(privateKey).export({ type: 'spki', format: 'pem' }).toString();
  return `${JSON.stringify({ alg: 'ed25519', key: fingerprint(pem), signature: sign(null, bytes, privateKey).toString('base64') })}\n`;
}

/**
 * Checks a store file's bytes (index.json, revocations.json) against its detached signature (`<file>.sig`) and
 * the trusted key: `key_changed` when another key signed it, `signature_bad` when the bytes do not verify.
 */
export function verifySigned(bytes: Buffer, sigBytes: Buffer, trustedPem: string, file = INDEX_FILE): void {
  let sig: { alg?: unknown; key?: unknown; signature?: unknown };
  try {
    sig = JSON.parse(sigBytes.toString('utf8'));
  } catch {
    throw storeError('store_signature', 'signature_bad', { detail: `${file}.sig is not JSON` });
  }
  if (sig?.alg !== 'ed25519' || typeof sig.key !== 'string' || typeof sig.signature !== 'string')
    throw storeError('store_signature', 'signature_bad', { detail: `${file}.sig needs alg ed25519, key and signature` });
  const trusted = fingerprint(trustedPem);
  if (sig.key !== trusted) throw storeError('store_signature', 'key_changed', { fingerprint: sig.key.slice(0, 64), trusted });
  if (!verify(null, bytes, createPublicKey(trustedPem), Buffer.from(sig.signature, 'base64')))
    throw storeError('store_signature', 'signature_bad', { detail: `${file} does not verify against the trusted key` });
}

/** index.json verified (`verifySigned`) and read; `bad_index` when the verified text is not a store index. */
export function verifyIndex(bytes: Buffer, sigBytes: Buffer, trustedPem: string): StoreIndex {
  verifySigned(bytes, sigBytes, trustedPem);
  return parseIndex(bytes);
}

/** Reads a (verified) index.json; `store_invalid` with the first problem's path. */
export function parseIndex(bytes: Buffer): StoreIndex {
  let raw: unknown;
  try {
    raw = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw storeError('store_invalid', 'bad_index', { detail: 'index.json is not JSON' });
  }
  const r = index.safeParse(raw);
  if (!r.success) {
    const first = r.error.issues[0];
    throw storeError('store_invalid', 'bad_index', { detail: `${first.path.join('.') || 'index'}: ${first.message}` });
  }
  return r.data;
}
