/**
 * `service store verify URL --key PUBLIC_KEY` (docs/app-store.md): fetches a
 * store's index.json and signature, verifies them against the key, then
 * fetches every file the index names (packages and pictures) and checks its size and sha256.
 * Problems with files are listed, not thrown, so one run shows them all.
 */
import { createHash } from 'node:crypto';
import { isAppError } from '../errors';
import { fetchStoreFile } from './fetch';
import { fingerprint, INDEX_FILE, INDEX_MAX_BYTES, SIGNATURE_FILE, SIGNATURE_MAX_BYTES, verifyIndex } from './format';

export interface StoreReport {
  name: string;
  fingerprint: string;
  entries: number;
  /** Packages and pictures checked. */
  files: number;
  problems: { file: string; reason: string }[];
}

export async function verifyStore(url: string, publicPem: string, timeoutMs = 15_000): Promise<StoreReport> {
  const get = async (u: string, maxBytes: number) => {
    const r = await fetchStoreFile(new URL(u, url).href, { timeoutMs, maxBytes });
    return (r as { bytes: Buffer }).bytes;
  };
  const index = verifyIndex(await get(INDEX_FILE, INDEX_MAX_BYTES), await get(SIGNATURE_FILE, SIGNATURE_MAX_BYTES), publicPem);
  const problems: StoreReport['problems'] = [];
  let files = 0;
  // Packages, and the pictures the catalogue shows (an icon, screenshots): each as the index describes it.
  for (const e of index.entries) {
    for (const v of [...e.versions, ...(e.icon ? [e.icon] : []), ...(e.screenshots ?? [])]) {
      files++;
      try {
        const bytes = await get(v.file, v.size);
        if (bytes.length !== v.size) problems.push({ file: v.file, reason: `size ${bytes.length}, the index says ${v.size}` });
        else if (createHash('sha256').update(bytes).digest('hex') !== v.sha256) problems.push({ file: v.file, reason: 'sha256 differs from the index' });
      } catch (err) {
        problems.push({ file: v.file, reason: isAppError(err) ? `${err.code}: ${err.params.reason}` : String(err) });
      }
    }
  }
  return { name: index.name, fingerprint: fingerprint(publicPem), entries: index.entries.length, files, problems };
}
