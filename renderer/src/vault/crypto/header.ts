/**
 * The FDV1 header (94 bytes) and the nonces and AADs of an encrypted file (docs/vault.md, "Content"):
 * "FDV1" | format 1 (u8) | chunk size log2 (u8) | key version (u32) | file id (16) | nonce prefix (8)
 * | wrapped content key: nonce (12) || AES-GCM(content_wrap, content key, AAD = "FDV1" || file id || key version (u32)) (48)
 */
import { type Bytes, concat, random, uint, utf8 } from './bytes';
import { VaultError } from './errors';
import type { FolderKey, FolderKeyring } from './folder-keys';
import { open, seal } from './kdf';
import { CHUNK_LOG2, HEADER_BYTES } from './padding';

const MAGIC = utf8('FDV1');
const FORMAT = 1;
export const CONTENT_KEY_BYTES = 32;

export interface Header {
  version: number;
  fileId: Bytes;
  noncePrefix: Bytes;
  wrapNonce: Bytes;
  wrappedKey: Bytes;
}

const wrapAad = (fileId: Bytes, version: number) => concat(MAGIC, fileId, uint(version, 4));

/** A new file's header: a fresh file id and nonce prefix, `contentKey` wrapped with the ring's newest key. */
export async function newHeader(key: FolderKey, contentKey: Bytes): Promise<Bytes> {
  const fileId = random(16);
  const wrapNonce = random(12);
  const wrappedKey = await seal(key.contentWrap, wrapNonce, contentKey, wrapAad(fileId, key.version));
  const out = concat(MAGIC, Uint8Array.of(FORMAT, CHUNK_LOG2), uint(key.version, 4), fileId, random(8), wrapNonce, wrappedKey);
  if (out.length !== HEADER_BYTES) throw new Error('FDV1 header layout');
  return out;
}

/** Parses a header; not FDV1 format 1 with 1 MiB chunks is `integrity` (the only layout this version reads). */
export function readHeader(bytes: Uint8Array<ArrayBuffer>): Header {
  if (bytes.length < HEADER_BYTES || MAGIC.some((b, i) => bytes[i] !== b) || bytes[4] !== FORMAT || bytes[5] !== CHUNK_LOG2) {
    throw new VaultError('integrity', 'This is not an encrypted file this version can read');
  }
  return {
    version: new DataView(bytes.buffer, bytes.byteOffset).getUint32(6),
    fileId: bytes.slice(10, 26),
    noncePrefix: bytes.slice(26, 34),
    wrapNonce: bytes.slice(34, 46),
    wrappedKey: bytes.slice(46, HEADER_BYTES),
  };
}

/** The content key inside a header: a version the ring lacks is `wrong_key`, a key that does not open `integrity`. */
export function unwrapContentKey(header: Header, ring: FolderKeyring): Promise<Bytes> {
  const key = ring.get(header.version);
  return open('integrity', key.contentWrap, header.wrapNonce, header.wrappedKey, wrapAad(header.fileId, header.version));
}

export function chunkNonce(header: Pick<Header, 'noncePrefix'>, index: number): Bytes {
  return concat(header.noncePrefix, uint(index, 4));
}

export function chunkAad(header: Pick<Header, 'fileId'>, index: number, final: boolean): Bytes {
  return concat(header.fileId, uint(index, 4), Uint8Array.of(final ? 1 : 0));
}
