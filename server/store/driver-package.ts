/**
 * A storage driver package (docs/app-store.md, "Storage drivers"): a signed ZIP
 * like an app package, holding `driver.json` (the facts the store lists),
 * `index.mjs` (a `filedock-storage/1` plugin program, docs/plugin-driver-protocol.md)
 * and `signature.json`, the app packages' publisher signature over the other two,
 * verified against the publisher keys the admin trusts (no trust of its own).
 */
import { Readable } from 'node:stream';
import { z } from 'zod';
import { openZip } from '../archives/zip-reader';
import { isAppError } from '../errors';
import { parseRange } from '../lib/versions';
import { readEntries, SIGNATURE_ENTRY, verifySignature, type TrustedKey } from '../plugins/package/package';
import { storeError } from './format';

export const DRIVER_FORMAT = 'filedock-storage-driver/1';
export const DRIVER_MANIFEST = 'driver.json';
export const DRIVER_PROGRAM = 'index.mjs';

const CAPS: Record<string, number> = { [DRIVER_MANIFEST]: 64 * 1024, [DRIVER_PROGRAM]: 2 * 1024 * 1024, [SIGNATURE_ENTRY]: 4096 };

const manifest = z.strictObject({
  format: z.literal(DRIVER_FORMAT),
  /** The plugin's handshake name: the driver is `plugin:<id>`. */
  id: z.string().regex(/^[a-z][a-z0-9_-]{0,39}$/),
  name: z.string().min(1).max(200),
  version: z.string().regex(/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/),
  publisher: z.string().regex(/^[a-z0-9][a-z0-9._-]{0,62}$/),
  filedock_range: z
    .string()
    .max(256)
    .refine((r) => parseRange(r) !== null, 'not a version range'),
  description: z.string().max(4000).optional(),
  released: z.string().max(10).optional(),
});
export type DriverManifest = z.infer<typeof manifest>;

export interface DriverPackage {
  manifest: DriverManifest;
  program: Buffer;
}

/** A package problem as the store's refusal: a signature is `store_signature`, anything else `store_invalid`. */
function refusal(e: unknown): never {
  if (!isAppError(e) || e.code !== 'validation_failed') throw e;
  const field = String(e.params.field ?? '');
  const detail = `${field}: ${e.params.reason ?? e.message}`;
  if (field.startsWith(SIGNATURE_ENTRY)) throw storeError('store_signature', 'package_signature', { detail }, 'storage');
  throw storeError('store_invalid', 'bad_package', { detail }, 'storage');
}

function parse(entries: Map<string, Buffer>): DriverPackage {
  const raw = entries.get(DRIVER_MANIFEST);
  const program = entries.get(DRIVER_PROGRAM);
  if (!raw || !program) throw storeError('store_invalid', 'bad_package', { detail: `needs ${DRIVER_MANIFEST} and ${DRIVER_PROGRAM}` }, 'storage');
  let json: unknown;
  try {
    json = JSON.parse(raw.toString('utf8'));
  } catch {
    throw storeError('store_invalid', 'bad_package', { detail: `${DRIVER_MANIFEST} is not JSON` }, 'storage');
  }
  const r = manifest.safeParse(json);
  if (!r.success) {
    const first = r.error.issues[0];
    throw storeError('store_invalid', 'bad_package', { detail: `${DRIVER_MANIFEST}: ${first.path.join('.')}: ${first.message}` }, 'storage');
  }
  return { manifest: r.data, program };
}

/** Verifies the publisher signature (a key the admin trusts for the manifest's publisher), then reads the package. */
export async function readDriverPackage(bytes: Buffer, trusted: TrustedKey[]): Promise<DriverPackage> {
  let pkg: DriverPackage;
  try {
    const entries = await readEntries(bytes, (n) => CAPS[n] ?? null);
    const { publisher } = verifySignature(entries, trusted);
    pkg = parse(entries);
    if (pkg.manifest.publisher !== publisher)
      throw storeError('store_signature', 'package_signature', { detail: `${publisher} signed a driver of ${pkg.manifest.publisher}` }, 'storage');
  } catch (e) {
    return refusal(e);
  }
  return pkg;
}

/** The manifest of a ZIP that is a driver package (it holds driver.json), read unverified for `store build`; null for any other ZIP. */
export async function peekDriverManifest(bytes: Buffer): Promise<DriverManifest | null> {
  const zip = await openZip({ size: bytes.length, read: async ({ start, end }) => Readable.from([bytes.subarray(start, end + 1)]) });
  const isDriver = zip.entries.some((e) => e.name === DRIVER_MANIFEST);
  zip.close();
  if (!isDriver) return null;
  try {
    return parse(await readEntries(bytes, (n) => CAPS[n] ?? null)).manifest;
  } catch (e) {
    return refusal(e);
  }
}
