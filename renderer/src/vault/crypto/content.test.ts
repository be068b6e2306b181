import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  type EncryptedBlob,
  cipherSize,
  contentKeyOf,
  decryptBlob,
  decryptStream,
  encryptBlob,
  FolderKeyring,
  HEADER_BYTES,
  paddedSize,
  VaultError,
} from './index';
import { concat } from './bytes';
import { decryptInPieces, pseudoRandom, rejectsWith, ringOf } from './testing';

const MiB = 1 << 20;
const STRIDE = MiB + 16;

async function encrypted(data: Uint8Array<ArrayBuffer>, ring: FolderKeyring): Promise<{ enc: EncryptedBlob; cipher: Uint8Array<ArrayBuffer> }> {
  const enc = await encryptBlob(new Blob([data]), ring);
  return { enc, cipher: await enc.slice(0, enc.size) };
}

/** The offset of chunk `i` in a ciphertext. */
const chunkAt = (i: number) => HEADER_BYTES + i * STRIDE;

test('round trips: empty, 1 byte, a chunk, a chunk ± 1, the size prefix at a chunk edge, several MiB of a random size', async () => {
  const ring = await ringOf(1);
  const sizes = [0, 1, MiB, MiB - 1, MiB + 1, MiB - 8, MiB - 9, 3 * MiB + Math.floor(Math.random() * 3 * MiB)];
  for (const size of sizes) {
    const data = pseudoRandom(size, size + 1);
    const { enc, cipher } = await encrypted(data, ring);
    assert.equal(enc.size, cipherSize(size), `declared size for ${size}`);
    assert.equal(cipher.length, cipherSize(size), `real ciphertext length for ${size}`);
    assert.equal(cipher.length, HEADER_BYTES + paddedSize(size) + Math.ceil(paddedSize(size) / MiB) * 16);
    const back = new Uint8Array(await (await decryptBlob(new Blob([cipher]), ring)).arrayBuffer());
    assert.deepEqual(back, data, `round trip of ${size} bytes`);
  }
});

test('the same file encrypts differently each time (new content key, file id and nonces)', async () => {
  const ring = await ringOf(1);
  const data = pseudoRandom(5000);
  const a = await encrypted(data, ring);
  const b = await encrypted(data, ring);
  assert.notDeepEqual(a.cipher.subarray(10, 34), b.cipher.subarray(10, 34));
  assert.notDeepEqual(a.enc.contentKey, b.enc.contentKey);
  assert.notDeepEqual(a.cipher.subarray(HEADER_BYTES), b.cipher.subarray(HEADER_BYTES));
});

test('slices: any range equals that range of the whole ciphertext, and asking again gives the same bytes', async () => {
  const ring = await ringOf(1);
  const data = pseudoRandom(5 * MiB + 12345, 7);
  const { enc, cipher } = await encrypted(data, ring);
  const ranges: Array<[number, number]> = [
    [0, 0],
    [0, 10],
    [0, HEADER_BYTES],
    [50, HEADER_BYTES + 5],
    [HEADER_BYTES, chunkAt(1)],
    [chunkAt(1) - 1, chunkAt(1) + 1],
    [chunkAt(2) + 7, chunkAt(4) - 3],
    [enc.size - 20, enc.size],
    [enc.size - 5, enc.size + 1000], // past the end: clamped
    [0, 8 * MiB], // an uploader's first 8 MiB part
  ];
  for (let k = 0; k < 20; k++) {
    const a = Math.floor(Math.random() * enc.size);
    ranges.push([a, a + Math.floor(Math.random() * 3 * MiB)]);
  }
  for (const [a, b] of ranges) {
    const part = await enc.slice(a, b);
    assert.deepEqual(part, cipher.subarray(a, Math.min(b, enc.size)), `slice ${a}..${b}`);
    assert.deepEqual(await enc.slice(a, b), part, `slice ${a}..${b} again`);
  }
  // An uploader's 8 MiB parts, put back together, are the whole ciphertext.
  const parts: Uint8Array[] = [];
  for (let at = 0; at < enc.size; at += 8 * MiB) parts.push(await enc.slice(at, at + 8 * MiB));
  assert.deepEqual(concat(...parts), cipher);
});

test('decryptStream takes its input in any pieces: 1 byte, odd sizes, random splits', async () => {
  const ring = await ringOf(1);
  const small = pseudoRandom(3000, 3);
  const one = await encrypted(small, ring);
  const byByte = await decryptInPieces(ring, one.cipher, () => 1);
  assert.equal(byByte.error, undefined);
  assert.deepEqual(byByte.output, small);

  const two = pseudoRandom(MiB + 300, 5);
  const odd = await decryptInPieces(ring, (await encrypted(two, ring)).cipher, () => 61);
  assert.equal(odd.error, undefined);
  assert.deepEqual(odd.output, two);

  const data = pseudoRandom(3 * MiB + 777, 4);
  const { cipher } = await encrypted(data, ring);
  for (const size of [4093, 65537, STRIDE - 1, STRIDE + 1, 3 * STRIDE + 5, cipher.length]) {
    const r = await decryptInPieces(ring, cipher, () => size);
    assert.equal(r.error, undefined, `pieces of ${size}`);
    assert.deepEqual(r.output, data, `pieces of ${size}`);
  }
  const r = await decryptInPieces(ring, cipher, () => 1 + Math.floor(Math.random() * 2 * STRIDE));
  assert.equal(r.error, undefined);
  assert.deepEqual(r.output, data);
  // Nothing comes out bigger than a chunk, whatever the input pieces.
  const big = await decryptInPieces(ring, cipher, () => cipher.length);
  assert.equal(big.pieces, 4);
});

test('decryptStream keeps no reference to a written piece: the writer may reuse its buffer once the write resolves', async () => {
  const ring = await ringOf(1);
  const data = pseudoRandom(2 * MiB + 5, 9);
  const { cipher } = await encrypted(data, ring);
  for (const size of [1000, STRIDE, 3 * STRIDE]) {
    const stream = decryptStream(ring, cipher.length);
    const collected = new Response(stream.readable).arrayBuffer();
    const writer = stream.writable.getWriter();
    const buf = new Uint8Array(size);
    for (let at = 0; at < cipher.length; at += size) {
      const piece = cipher.subarray(at, at + size);
      buf.set(piece);
      await writer.write(buf.subarray(0, piece.length));
      buf.fill(0xee);
    }
    await writer.close();
    assert.deepEqual(new Uint8Array(await collected), data, `pieces of ${size}`);
  }
});

/** Decrypts `cipher` (declaring `total`) and checks it fails with `integrity` having emitted at most the first `goodChunks` chunks' bytes. */
async function failsAfter(ring: FolderKeyring, cipher: Uint8Array<ArrayBuffer>, data: Uint8Array, goodChunks: number, total = cipher.length, label = '') {
  for (const size of [STRIDE, 4099]) {
    const r = await decryptInPieces(ring, cipher, () => size, total);
    assert.ok(r.error instanceof VaultError, `${label}: expected a VaultError, got ${r.error}`);
    assert.equal(r.error.code, 'integrity', label);
    const expected = goodChunks === 0 ? 0 : goodChunks * MiB - 8;
    assert.ok(r.output.length <= expected, `${label}: ${r.output.length} bytes came out, at most ${expected} were verified`);
    assert.deepEqual(r.output, data.subarray(0, r.output.length), `${label}: what came out is the file's start`);
  }
  if (total === cipher.length) await rejectsWith(decryptBlob(new Blob([cipher]), ring), 'integrity');
}

const flipped = (cipher: Uint8Array, at: number) => {
  const out = cipher.slice();
  out[at] ^= 0x01;
  return out;
};

test('tampering: a flipped byte in the wrapped key, in each chunk, in a tag, in the nonce prefix or file id is integrity; nothing unverified comes out', async () => {
  const ring = await ringOf(1);
  const data = pseudoRandom(3 * MiB + 100, 11);
  const { cipher } = await encrypted(data, ring);
  assert.equal((cipher.length - HEADER_BYTES - paddedSize(data.length)) / 16, 4);
  await failsAfter(ring, flipped(cipher, 60), data, 0, cipher.length, 'wrapped key');
  await failsAfter(ring, flipped(cipher, 30), data, 0, cipher.length, 'nonce prefix');
  await failsAfter(ring, flipped(cipher, 12), data, 0, cipher.length, 'file id');
  for (let i = 0; i < 4; i++) await failsAfter(ring, flipped(cipher, chunkAt(i) + 500), data, i, cipher.length, `chunk ${i}`);
  await failsAfter(ring, flipped(cipher, chunkAt(2) - 3), data, 1, cipher.length, "chunk 1's tag");
  await failsAfter(ring, flipped(cipher, cipher.length - 1), data, 3, cipher.length, "the last chunk's tag");
});

test('truncation: at a chunk edge or mid-chunk, declared or not, is integrity', async () => {
  const ring = await ringOf(1);
  // 3 MiB padded: dropping the last chunk leaves a length a real 2 MiB file could have.
  const data = pseudoRandom(3 * MiB - 8, 12);
  const { cipher } = await encrypted(data, ring);
  assert.equal(paddedSize(data.length), 3 * MiB);
  const cut = cipher.subarray(0, chunkAt(2));
  assert.equal(cut.length, cipherSize(2 * MiB - 8), 'the cut length is a valid one');
  await failsAfter(ring, cut, data, 1, cut.length, 'last chunk dropped, length declared');
  await failsAfter(ring, cut, data, 2, cipher.length, 'last chunk dropped, stream ends early');
  const mid = cipher.subarray(0, chunkAt(1) + 1000);
  await failsAfter(ring, mid, data, 1, mid.length, 'mid-chunk, length declared');
  await failsAfter(ring, mid, data, 1, cipher.length, 'mid-chunk, stream ends early');
  await failsAfter(ring, cipher.subarray(0, 50), data, 0, cipher.length, 'inside the header');
});

test('reordering and splicing: two chunks swapped, a chunk from another file of the same folder, an appended chunk', async () => {
  const ring = await ringOf(1);
  const data = pseudoRandom(4 * MiB - 8, 13);
  const { cipher } = await encrypted(data, ring);
  const chunk = (c: Uint8Array, i: number) => c.subarray(chunkAt(i), chunkAt(i + 1));

  const swapped = concat(cipher.subarray(0, chunkAt(1)), chunk(cipher, 2), chunk(cipher, 1), cipher.subarray(chunkAt(3)));
  assert.equal(swapped.length, cipher.length);
  await failsAfter(ring, swapped, data, 1, swapped.length, 'chunks 1 and 2 swapped');

  const other = await encrypted(pseudoRandom(4 * MiB - 8, 14), ring);
  const spliced = concat(cipher.subarray(0, chunkAt(2)), chunk(other.cipher, 2), cipher.subarray(chunkAt(3)));
  await failsAfter(ring, spliced, data, 2, spliced.length, "another file's chunk 2");
  const otherHeader = concat(other.cipher.subarray(0, HEADER_BYTES), cipher.subarray(HEADER_BYTES));
  await failsAfter(ring, otherHeader, data, 0, otherHeader.length, "another file's header");

  const appended = concat(cipher, chunk(cipher, 3));
  await failsAfter(ring, appended, data, 0, appended.length, 'a chunk appended, length declared');
  await failsAfter(ring, appended, data, 4, cipher.length, 'a chunk appended, longer than declared');
  const longer = concat(cipher, new Uint8Array(1));
  await failsAfter(ring, longer, data, 4, cipher.length, 'one byte more than declared');
});

test('a declared total that no file has, and a header whose true size does not fit its length, are integrity', async () => {
  const ring = await ringOf(1);
  const data = pseudoRandom(2 * MiB, 15);
  const { enc, cipher } = await encrypted(data, ring);
  for (const total of [0, 93, 5000, cipher.length - 1, cipher.length + 1, 1.5]) {
    const r = await decryptInPieces(ring, cipher, () => STRIDE, total);
    assert.ok(r.error instanceof VaultError && r.error.code === 'integrity', `total ${total}`);
    assert.equal(r.output.length, 0);
  }
  // Re-seal chunk 0 with the real content key but a size prefix one bucket too small: authentic bytes, a lie about the size.
  const aes = await crypto.subtle.importKey('raw', enc.contentKey, 'AES-GCM', false, ['encrypt', 'decrypt']);
  const iv = concat(cipher.subarray(26, 34), new Uint8Array(4));
  const aad = concat(cipher.subarray(10, 26), new Uint8Array(4), new Uint8Array([0]));
  const plain = new Uint8Array(await crypto.subtle.decrypt({ name: 'AES-GCM', iv, additionalData: aad }, aes, cipher.subarray(chunkAt(0), chunkAt(1))));
  new DataView(plain.buffer).setBigUint64(0, 100n);
  const lying = cipher.slice();
  lying.set(new Uint8Array(await crypto.subtle.encrypt({ name: 'AES-GCM', iv, additionalData: aad }, aes, plain)), chunkAt(0));
  await failsAfter(ring, lying, data, 0, lying.length, 'true size 100 in a 2 MiB stream');
  new DataView(plain.buffer).setBigUint64(0, 2n ** 60n);
  lying.set(new Uint8Array(await crypto.subtle.encrypt({ name: 'AES-GCM', iv, additionalData: aad }, aes, plain)), chunkAt(0));
  await failsAfter(ring, lying, data, 0, lying.length, 'true size 2^60');
});

test('contentKeyOf opens the header; that key alone decrypts the file (a link), and a wrong one is integrity', async () => {
  const ring = await ringOf(5, [1, 2]);
  const data = pseudoRandom(MiB + 3, 16);
  const { enc, cipher } = await encrypted(data, ring);
  const key = await contentKeyOf(cipher.slice(0, HEADER_BYTES), ring);
  assert.deepEqual(key, enc.contentKey);
  const back = await decryptBlob(new Blob([cipher]), { contentKey: key });
  assert.deepEqual(new Uint8Array(await back.arrayBuffer()), data);
  const wrong = key.slice();
  wrong[0] ^= 1;
  await rejectsWith(decryptBlob(new Blob([cipher]), { contentKey: wrong }), 'integrity');
  await rejectsWith(decryptBlob(new Blob([cipher]), { contentKey: key.subarray(0, 31) }), 'bad_link_key');
  await rejectsWith(contentKeyOf(cipher.slice(0, HEADER_BYTES), await ringOf(5)), 'wrong_key');
  await rejectsWith(contentKeyOf(flipped(cipher, 80).slice(0, HEADER_BYTES), ring), 'integrity');
  await rejectsWith(contentKeyOf(cipher.slice(0, 93), ring), 'integrity');
});

test("files use the newest key version; a ring without a file's version is wrong_key, an older ring still reads older files", async () => {
  const v1 = await ringOf(8, [1]);
  const data = pseudoRandom(10_000, 17);
  const old = await encrypted(data, v1);
  assert.equal(new DataView(old.cipher.buffer).getUint32(6), 1);
  const v2 = await ringOf(8, [2]);
  const both = new FolderKeyring(8, [v1.get(1), v2.get(2)]);
  const fresh = await encrypted(data, both);
  assert.equal(new DataView(fresh.cipher.buffer).getUint32(6), 2);
  assert.deepEqual(new Uint8Array(await (await decryptBlob(new Blob([old.cipher]), both)).arrayBuffer()), data);
  await rejectsWith(decryptBlob(new Blob([fresh.cipher]), v1), 'wrong_key');
  await rejectsWith(decryptBlob(new Blob([old.cipher]), v2), 'wrong_key');
});
