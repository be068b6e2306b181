/**
 * A Writable over an open FileHandle with positional writes. Unlike
 * fs.WriteStream on a borrowed fd, it never closes the handle (the caller
 * owns it, fsyncs and closes it), so an errored pipeline cannot close an fd
 * number that another file may already reuse.
 */
import { Writable } from 'node:stream';
import type { FileHandle } from 'node:fs/promises';

const HIGH_WATER = 1024 * 1024;

/** Writes everything it receives to `fh` starting at byte `start`. */
export function fileSink(fh: FileHandle, start = 0): Writable {
  let pos = start;
  const writeAll = async (chunks: Buffer[]) => {
    let total = chunks.reduce((n, c) => n + c.length, 0);
    let bufs = chunks;
    while (total > 0) {
      const { bytesWritten } = await fh.writev(bufs, pos);
      pos += bytesWritten;
      total -= bytesWritten;
      // A short write (rare on regular files) resumes where it stopped.
      if (total > 0) {
        const flat = Buffer.concat(bufs);
        bufs = [flat.subarray(flat.length - total)];
      }
    }
  };
  return new Writable({
    highWaterMark: HIGH_WATER,
    writev(chunks, cb) {
      writeAll(chunks.map((c) => c.chunk as Buffer)).then(() => cb(), cb);
    },
  });
}
