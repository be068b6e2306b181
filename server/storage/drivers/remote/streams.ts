/**
 * Small byte-stream transforms shared by the network drivers (webdav, ftp).
 */
import { Transform } from 'node:stream';
import { AppError } from '../../../errors';

/** Passes bytes through, reporting progress and refusing (via `onMismatch` too) a body that differs from its declared size. */
export function countBytes(size: number | undefined, onProgress: () => void, onMismatch: (e: AppError) => void): Transform {
  let seen = 0;
  const mismatch = () => {
    const e = new AppError(
      'bad_body',
      { reason: 'size_mismatch', expected: size, received: seen },
      undefined,
      `body size ${seen} differs from the declared ${size}`,
    );
    onMismatch(e);
    return e;
  };
  return new Transform({
    transform(chunk: Buffer, _enc, cb) {
      seen += chunk.length;
      onProgress();
      if (size !== undefined && seen > size) cb(mismatch());
      else cb(null, chunk);
    },
    flush(cb) {
      cb(size !== undefined && seen !== size ? mismatch() : null);
    },
  });
}
