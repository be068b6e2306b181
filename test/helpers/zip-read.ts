/**
 * Reads a ZIP file back with yauzl (an independent reader): every entry by
 * name, folders as `dir`; an entry seen twice fails.
 */
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import yauzl from 'yauzl';

export async function zipEntries<V>(file: string, read: (s: Readable) => Promise<V>, dir: V): Promise<Map<string, V>> {
  const zip = await new Promise<yauzl.ZipFile>((res, rej) => yauzl.open(file, { lazyEntries: true }, (e, z) => (e ? rej(e) : res(z!))));
  const out = new Map<string, V>();
  try {
    await new Promise<void>((resolve, reject) => {
      zip.on('entry', (e: yauzl.Entry) => {
        if (out.has(e.fileName)) return reject(new Error(`entry ${e.fileName} twice`));
        if (e.fileName.endsWith('/')) {
          out.set(e.fileName, dir);
          return zip.readEntry();
        }
        zip.openReadStream(e, (err, s) => {
          if (err) return reject(err);
          read(s!).then((v) => {
            out.set(e.fileName, v);
            zip.readEntry();
          }, reject);
        });
      });
      zip.on('end', resolve);
      zip.on('error', reject);
      zip.readEntry();
    });
  } finally {
    zip.close();
  }
  return out;
}

/** name → sha256 hex of the bytes (`dir` for folders), streamed. */
export const zipDigests = (file: string) =>
  zipEntries(
    file,
    async (s) => {
      const h = createHash('sha256');
      for await (const c of s) h.update(c as Buffer);
      return h.digest('hex');
    },
    'dir',
  );

/** name → the bytes (null for folders). */
export const zipBytes = (file: string) =>
  zipEntries<Buffer | null>(
    file,
    async (s) => {
      const parts: Buffer[] = [];
      for await (const c of s) parts.push(c as Buffer);
      return Buffer.concat(parts);
    },
    null,
  );
