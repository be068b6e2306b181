/**
 * Gzip copies of listing pages, made once per folder generation and page in
 * the background (zlib runs on libuv's thread pool, never on the event loop)
 * and served to every client that accepts gzip until the folder changes.
 * A 1,000-row page carrying 32 `app_state` items per row is ~1 MB of JSON and
 * ~60 KB gzipped: sending the compressed copy is what keeps such listings as
 * fast as plain ones. The first request of a page goes out uncompressed (no
 * client waits for compression); small pages are never compressed.
 */
import { gzip } from 'node:zlib';
import { PageCache } from './page-cache';

/** Bodies below this are sent as they are (gzip would save a packet or two at the cost of a round of CPU). */
const MIN_BYTES = 8 * 1024;
/** Level 4: most of level 6's ratio on JSON for about half the CPU. */
const LEVEL = 4;

export class GzipPages {
  private cache: PageCache<{ gz: Buffer; bytes: number }>;
  private pending = new Set<string>();

  constructor(maxBytes = 16 * 1024 * 1024) {
    this.cache = new PageCache(maxBytes);
  }

  /** Feeds invalidation (the listing's `folder.changed` hook). */
  changed(storageId: number, folder: string, structural: boolean): void {
    this.cache.changed(storageId, folder, structural);
  }

  /** The gzip copy of this page of the folder's current generation, if one was made. */
  get(storageId: number, folder: string, key: string): Buffer | undefined {
    return this.cache.get(storageId, folder, key)?.gz;
  }

  /**
   * Starts compressing `body` (a page just served plain) unless it is small
   * or already on its way; the copy is stored under the folder generation
   * seen now, so a change meanwhile makes it stale rather than wrong.
   */
  offer(storageId: number, folder: string, key: string, body: Buffer | Buffer[]): void {
    const plain = Array.isArray(body) ? body : [body];
    const size = plain.reduce((n, b) => n + b.length, 0);
    if (size < MIN_BYTES || this.pending.has(key)) return;
    const stamp = this.cache.stampOf(storageId, folder);
    this.pending.add(key);
    gzip(plain.length === 1 ? plain[0] : Buffer.concat(plain, size), { level: LEVEL }, (err, gz) => {
      this.pending.delete(key);
      if (!err) this.cache.set(storageId, folder, key, { gz, bytes: gz.length }, stamp);
    });
  }
}
