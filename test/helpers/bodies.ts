/**
 * Request bodies for driver upload checks: a generated body measured for
 * memory growth, and a slow body a test can interrupt at a known point.
 */
import { Readable } from 'node:stream';
import type { Entry, StorageDriver } from '../../server/storage/types';

/**
 * Writes `bytes` through `driver` from a generated 1 MiB-chunk body and returns
 * the peak RSS growth seen meanwhile (sampled every 25 ms).
 */
export async function flatMemoryUpload(driver: StorageDriver, path: string, bytes: number): Promise<{ growth: number; entry: Entry }> {
  const chunk = Buffer.alloc(1024 * 1024, 0x5a);
  let left = bytes;
  const body = new Readable({
    highWaterMark: chunk.length,
    read() {
      const n = Math.min(left, chunk.length);
      left -= n;
      this.push(n === 0 ? null : chunk.subarray(0, n));
    },
  });
  const base = process.memoryUsage.rss();
  let peak = base;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 25);
  try {
    const entry = await driver.write(path, body, { size: bytes });
    return { growth: Math.max(peak, process.memoryUsage.rss()) - base, entry };
  } finally {
    clearInterval(timer);
  }
}

/** A body that emits `chunks` chunks of `chunkBytes`, one every 10 ms; `sent(n)` resolves after the n-th. */
export function slowBody(chunkBytes: number, chunks: number): { stream: Readable; sent(n: number): Promise<void> } {
  let count = 0;
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  const stream = new Readable({
    read() {
      setTimeout(() => {
        if (stream.destroyed) return;
        count += 1;
        this.push(count > chunks ? null : Buffer.alloc(chunkBytes, 0x41));
        for (const w of waiters.filter((x) => x.n <= count)) w.resolve();
      }, 10);
    },
  });
  return { stream, sent: (n) => new Promise((resolve) => (n <= count ? resolve() : waiters.push({ n, resolve }))) };
}
