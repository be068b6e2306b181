/**
 * Compressed copies of listing pages, made once per folder generation, page
 * and encoding in the background (zlib runs on libuv's thread pool, never on
 * the event loop) and served to every client accepting that encoding until
 * the folder changes. A 1,000-row page carrying 32 `app_state` items per row
 * is ~1 MB of JSON: ~24 KB in gzip, ~7 KB in brotli (every browser accepts
 * br), less than the plain page's gzip copy. The first request of a page goes
 * out uncompressed (no client waits for compression); small pages are never
 * compressed.
 */
import { brotliCompress, constants, gzip } from 'node:zlib';
import { PageCache } from './page-cache';

export type PageEncoding = 'br' | 'gzip';

/** Bodies below this are sent as they are (compression would save a packet or two at the cost of a round of CPU). */
const MIN_BYTES = 8 * 1024;
/** Gzip level 4: most of level 6's ratio on JSON for about half the CPU (for clients without brotli). */
const GZIP_LEVEL = 4;
/**
 * Brotli quality 6: on the app-state page 6.6 KB against 11.9 KB at 5 and
 * about the same at 8 to 11 (which cost up to seconds); ~10 ms of a pool
 * thread for 1 MB, once per generation.
 */
const BROTLI_QUALITY = 6;

function compress(encoding: PageEncoding, body: Buffer, done: (err: Error | null, out: Buffer) => void): void {
  if (encoding === 'gzip') gzip(body, { level: GZIP_LEVEL }, done);
  else
    brotliCompress(
      body,
      {
        params: {
          [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
          [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
          [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
        },
      },
      done,
    );
}

export class CompressedPages {
  private cache: PageCache<{ data: Buffer; bytes: number }>;
  private pending = new Set<string>();

  constructor(maxBytes = 16 * 1024 * 1024) {
    this.cache = new PageCache(maxBytes);
  }

  /** Feeds invalidation (the listing's `folder.changed` hook). */
  changed(storageId: number, folder: string, structural: boolean): void {
    this.cache.changed(storageId, folder, structural);
  }

  /** Forgets every copy (with the listing's resync). */
  clear(): void {
    this.cache.clear();
  }

  /** The `encoding` copy of this page of the folder's current generation, if one was made. */
  get(storageId: number, folder: string, key: string, encoding: PageEncoding): Buffer | undefined {
    return this.cache.get(storageId, folder, `${encoding}:${key}`)?.data;
  }

  /**
   * Starts compressing `body` (a page just served plain) unless it is small
   * or already on its way; the copy is stored under the folder generation
   * seen now, so a change meanwhile makes it stale rather than wrong.
   */
  offer(storageId: number, folder: string, key: string, encoding: PageEncoding, body: Buffer | Buffer[]): void {
    const plain = Array.isArray(body) ? body : [body];
    const size = plain.reduce((n, b) => n + b.length, 0);
    const k = `${encoding}:${key}`;
    if (size < MIN_BYTES || this.pending.has(k)) return;
    const stamp = this.cache.stampOf(storageId, folder);
    this.pending.add(k);
    compress(encoding, plain.length === 1 ? plain[0] : Buffer.concat(plain, size), (err, data) => {
      this.pending.delete(k);
      if (!err) this.cache.set(storageId, folder, k, { data, bytes: data.length }, stamp);
    });
  }
}
