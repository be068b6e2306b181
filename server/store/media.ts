/**
 * The catalogue's pictures (an entry's icon and screenshots; docs/app-store.md,
 * "Pictures"), fetched from the store by the service so that the admin's
 * browser never talks to a store (its address stays private, the CSP stays
 * closed) and only what the signed index names is read: each picture bounded
 * by its declared size (at most 5 MiB, the spec's icon limit), checked
 * against its sha256, its type read from its first bytes. Kept an hour (the
 * spec's icon cache), 64 MiB in all; at most 10 waiting requests per person.
 */
import { createHash } from 'node:crypto';
import { AppError } from '../errors';
import type { StoreConnection, StoreConnectionsRepo } from './connections.repo';
import { fetchStoreFile } from './fetch';
import { storeError, type StoreIndex } from './format';

/** The spec's "icon 1 hour". */
export const MEDIA_TTL_MS = 3_600_000;
const CACHE_MAX_BYTES = 64 * 1024 * 1024;
/** The spec's "10 waiting requests per person". */
export const MEDIA_WAITING_PER_PERSON = 10;

export interface Picture {
  bytes: Buffer;
  type: 'image/png' | 'image/jpeg' | 'image/webp';
}

/** The picture's type from its first bytes (never from its name or the store's header), or null. */
export function pictureType(b: Buffer): Picture['type'] | null {
  if (b.length >= 8 && b.readUInt32BE(0) === 0x89504e47 && b.readUInt32BE(4) === 0x0d0a1a0a) return 'image/png';
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'image/jpeg';
  if (b.length >= 12 && b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP') return 'image/webp';
  return null;
}

export interface StoreMediaDeps {
  repo: StoreConnectionsRepo;
  /** The store's verified index (the catalogue's copy). */
  index: (c: StoreConnection) => Promise<StoreIndex>;
  timeoutMs: number;
}

export class StoreMedia {
  private cache = new Map<string, { at: number; picture: Picture }>();
  private cached = 0;
  private waiting = new Map<number, number>();
  constructor(private d: StoreMediaDeps) {}

  /** Picture `file` of store `storeId` for person `by`: `rate_limited` past 10 waiting, `not_found` when the index names no such picture. */
  async get(by: number, storeId: number, file: string): Promise<Picture> {
    const n = this.waiting.get(by) ?? 0;
    if (n >= MEDIA_WAITING_PER_PERSON) throw new AppError('rate_limited', { reason: `${MEDIA_WAITING_PER_PERSON} store pictures are waiting already` });
    this.waiting.set(by, n + 1);
    try {
      return await this.load(storeId, file);
    } finally {
      const left = (this.waiting.get(by) ?? 1) - 1;
      if (left > 0) this.waiting.set(by, left);
      else this.waiting.delete(by);
    }
  }

  private async load(storeId: number, file: string): Promise<Picture> {
    const c = await this.d.repo.get(storeId);
    if (!c || !c.enabled) throw new AppError('not_found', { path: `store ${storeId}` });
    const index = await this.d.index(c);
    const pic = index.entries.flatMap((e) => [...(e.icon ? [e.icon] : []), ...(e.screenshots ?? [])]).find((p) => p.file === file);
    if (!pic) throw new AppError('not_found', { path: file });
    const key = `${c.id}:${pic.sha256}`;
    const hit = this.cache.get(key);
    if (hit && Date.now() - hit.at < MEDIA_TTL_MS) return hit.picture;
    let bytes: Buffer;
    try {
      bytes = ((await fetchStoreFile(new URL(pic.file, c.url).href, { timeoutMs: this.d.timeoutMs, maxBytes: pic.size })) as { bytes: Buffer }).bytes;
    } catch (e) {
      if (e instanceof AppError && e.params.reason === 'too_large') throw storeError('store_sha_mismatch', 'size_mismatch', { file, size: pic.size });
      throw e;
    }
    if (bytes.length !== pic.size) throw storeError('store_sha_mismatch', 'size_mismatch', { file, size: pic.size, got: bytes.length });
    const got = createHash('sha256').update(bytes).digest('hex');
    if (got !== pic.sha256) throw storeError('store_sha_mismatch', 'sha_mismatch', { file, sha256: pic.sha256, got });
    const type = pictureType(bytes);
    if (!type) throw storeError('store_invalid', 'not_a_picture', { file });
    this.keep(key, { bytes, type });
    return { bytes, type };
  }

  private keep(key: string, picture: Picture) {
    const old = this.cache.get(key);
    if (old) this.cached -= old.picture.bytes.length;
    this.cache.set(key, { at: Date.now(), picture });
    this.cached += picture.bytes.length;
    // Oldest first (a Map keeps insertion order).
    for (const [k, v] of this.cache) {
      if (this.cached <= CACHE_MAX_BYTES) break;
      this.cache.delete(k);
      this.cached -= v.picture.bytes.length;
    }
  }
}
