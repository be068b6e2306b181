/**
 * The shapes the server recognises in encrypted folders (docs/vault.md, "Cryptography"), by shape only: the
 * server never holds a key. A name is lowercase base32 of 32 to 255 characters; a file starts with the FDV1
 * header (94 bytes: "FDV1", format 1, chunk size log2, key version u32, file id, nonce prefix, wrapped content
 * key). Checking a stream's header reads its first 94 bytes as they pass and never buffers more.
 */
import { Readable } from 'node:stream';
import { AppError } from '../errors';

export const HEADER_BYTES = 94;
const MAGIC = Buffer.from('FDV1', 'latin1');
const NAME = /^[a-z2-7]{32,255}$/;
/** Chunk sizes the format allows (4 KiB to 16 MiB); the browser writes 1 MiB (20). */
const CHUNK_LOG2 = { min: 12, max: 24 };

export const isEncryptedName = (name: string): boolean => NAME.test(name);

/** Why `head` (at least the first 94 bytes) is not an FDV1 header for a folder at `keyVersion`, or null. */
export function headerProblem(head: Buffer, keyVersion: number): string | null {
  if (head.length < HEADER_BYTES) return 'shorter than an encrypted file header';
  if (!head.subarray(0, 4).equals(MAGIC)) return 'no FDV1 header';
  if (head[4] !== 1) return 'unknown format';
  if (head[5] < CHUNK_LOG2.min || head[5] > CHUNK_LOG2.max) return 'bad chunk size';
  const version = head.readUInt32BE(6);
  if (version < 1 || version > keyVersion) return 'unknown key version';
  return null;
}

export const notEncrypted = (path: string, reason: string) => new AppError('not_encrypted', { path, reason }, { reason });

/** Passes `body` through, refusing (`not_encrypted`) when its first bytes are not an FDV1 header for `keyVersion`. */
export function guardHeader(body: Readable, keyVersion: number, path: string): Readable {
  async function* guarded() {
    let head: Buffer | null = Buffer.alloc(0);
    for await (const chunk of body) {
      if (head === null) {
        yield chunk as Buffer;
        continue;
      }
      head = Buffer.concat([head, chunk as Buffer]);
      if (head.length < HEADER_BYTES) continue;
      const problem = headerProblem(head, keyVersion);
      if (problem) throw notEncrypted(path, problem);
      yield head;
      head = null;
    }
    if (head !== null) throw notEncrypted(path, headerProblem(head, keyVersion) ?? 'empty');
  }
  return Readable.from(guarded(), { objectMode: false });
}
