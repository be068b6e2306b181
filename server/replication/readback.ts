/**
 * The read-back content check after a copy: a target that accepts a write
 * but stores other bytes (same size) must not count as a backup. Windows of
 * the file are kept as they stream past, then read back from the target and
 * compared: the whole file when it is small, else a few random windows and
 * the tail (reading a large copy back whole would double its transfer; the
 * content audit compares whole files later).
 */
import { randomInt } from 'node:crypto';
import type { RDriver } from './types';

/** Files up to this size are read back whole. */
export const WHOLE_READBACK_BYTES = 1024 * 1024;
const WINDOW_BYTES = 64 * 1024;
/** Random windows of a larger file, besides its last one. */
const RANDOM_WINDOWS = 3;

interface Window {
  start: number;
  bytes: Buffer;
  /** How much of the window has passed so far. */
  seen: number;
}

export class ReadbackSample {
  private windows: Window[];

  /** Windows for a file expected to hold `size` bytes (a file that changes meanwhile is checked where it overlaps). */
  constructor(size: number) {
    const starts =
      size <= WHOLE_READBACK_BYTES ? [0] : [...Array.from({ length: RANDOM_WINDOWS }, () => randomInt(0, size - WINDOW_BYTES)), size - WINDOW_BYTES];
    const len = Math.min(size, size <= WHOLE_READBACK_BYTES ? size : WINDOW_BYTES);
    this.windows = [...new Set(starts)].sort((a, b) => a - b).map((start) => ({ start, bytes: Buffer.allocUnsafe(len), seen: 0 }));
  }

  /** Keeps what of `chunk` (at file offset `at`) falls in a window. */
  see(chunk: Buffer, at: number): void {
    for (const w of this.windows) {
      const from = Math.max(at, w.start + w.seen);
      const to = Math.min(at + chunk.length, w.start + w.bytes.length);
      if (from >= to || from !== w.start + w.seen) continue;
      chunk.copy(w.bytes, w.seen, from - at, to - at);
      w.seen += to - from;
    }
  }

  /** The offset of the first window whose bytes on the target differ from what was sent, or null when all match. */
  async mismatch(target: RDriver, rel: string, signal: AbortSignal): Promise<number | null> {
    for (const w of this.windows) {
      if (w.seen === 0) continue;
      const got = await readRange(target, rel, w.start, w.seen, signal);
      if (!got.equals(w.bytes.subarray(0, w.seen))) return w.start;
    }
    return null;
  }
}

/** `len` bytes of `rel` from `start` (fewer when the file is shorter). */
async function readRange(d: RDriver, rel: string, start: number, len: number, signal: AbortSignal): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const c of await d.read(rel, { start, end: start + len - 1 }, signal)) {
    chunks.push(c as Buffer);
    n += (c as Buffer).length;
    if (n >= len) break;
  }
  return Buffer.concat(chunks).subarray(0, len);
}
