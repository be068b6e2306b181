/**
 * Makes a ranged GET answer exactly the bytes asked for. Some S3-compatible
 * stores widen a range (s3rver reads `bytes=0-0` as the whole object) or
 * ignore it (200 with the full body); S3 itself answers exactly.
 */
import type { Readable } from 'node:stream';
import { takeBytes } from '../../../lib/streams';
import type { ByteRange } from '../../types';

/** First and last byte the server says it sent, from `Content-Range: bytes a-b/total`. */
function served(contentRange: string | undefined): { start: number; end: number } | null {
  const m = /^bytes (\d+)-(\d+)\//.exec(contentRange ?? '');
  return m ? { start: Number(m[1]), end: Number(m[2]) } : null;
}

/**
 * `body` trimmed to `range`: returned as is when the server honoured the
 * range, else sliced out of it (the surplus is dropped and the download ends early).
 */
export function fitRange(body: Readable, range: ByteRange, contentRange: string | undefined): Readable {
  const got = served(contentRange) ?? { start: 0, end: Infinity };
  const skip = range.start - got.start;
  const want = range.end === undefined ? Infinity : range.end - range.start + 1;
  if (skip === 0 && (range.end === undefined || got.end - got.start + 1 === want)) return body;
  return takeBytes(body, skip, want);
}
