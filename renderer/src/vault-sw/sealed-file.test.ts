import { test } from 'node:test';
import assert from 'node:assert/strict';
import { contentKeyOf, encryptBlob, HEADER_BYTES } from '../vault/crypto/index';
import { importAesKey } from '../vault/crypto/kdf';
import { pseudoRandom, rejectsWith, ringOf } from '../vault/crypto/testing';
import type { ByteRange } from './ranges';
import { SealedFile } from './sealed-file';

const MiB = 1 << 20;

/** An encrypted file served from memory as the raw route serves it (200 whole, 206 for a range). */
async function served(plain: Uint8Array<ArrayBuffer>) {
  const ring = await ringOf(7);
  const enc = await encryptBlob(new Blob([plain]), ring);
  const cipher = await enc.slice(0, enc.size);
  const key = await importAesKey(await contentKeyOf(cipher.slice(0, HEADER_BYTES), ring));
  const asked: Array<ByteRange | null> = [];
  const fetchCipher = async (r: ByteRange | null) => {
    asked.push(r);
    if (!r) return new Response(new Blob([cipher]), { headers: { 'Content-Length': String(cipher.length) } });
    const body = cipher.slice(r.start, r.end + 1);
    return new Response(new Blob([body]), { status: 206, headers: { 'Content-Range': `bytes ${r.start}-${r.end}/${cipher.length}` } });
  };
  return { cipher, key, asked, file: () => new SealedFile(key, cipher.length, fetchCipher) };
}

const read = async (s: ReadableStream<Uint8Array>) => new Uint8Array(await new Response(s).arrayBuffer());

test('the whole file in one fetch, with the true size known before its bytes', async () => {
  const plain = pseudoRandom(5 * MiB + 123);
  const { file, asked } = await served(plain);
  const f = file();
  let ended: unknown = 'no';
  const s = await f.whole((e) => (ended = e));
  assert.equal(f.size, plain.length);
  assert.deepEqual(await read(s), plain);
  assert.equal(ended, undefined);
  assert.deepEqual(asked, [null]);
});

test('a whole file whose padding fills its last chunks: those are read and verified too', async () => {
  // padmé rounds 64 MiB + 9 up to 66 MiB: the last two chunks hold padding only.
  const plain = new Uint8Array(64 * MiB + 1).map((_, i) => i * 7);
  const { file, cipher } = await served(plain);
  const f = file();
  const got = await read(await f.whole(() => {}));
  assert.equal(got.length, plain.length);
  assert.deepEqual(got, plain);
  assert.equal(f.fetched, cipher.length);
});

test('ranges fetch only the chunks they cover, and give exactly the bytes asked for', async () => {
  const plain = pseudoRandom(9 * MiB + 4567, 3);
  const { file, asked } = await served(plain);
  const f = file();
  const cases: ByteRange[] = [
    { start: 7 * MiB + 5, end: 8 * MiB + 99 },
    { start: 0, end: 10 },
    { start: MiB - 8, end: MiB - 1 },
    { start: 2 * MiB, end: plain.length - 1 },
    { start: plain.length - 1, end: plain.length - 1 },
  ];
  for (const r of cases) {
    assert.deepEqual(await read(await f.range(r, () => {})), plain.subarray(r.start, r.end + 1), JSON.stringify(r));
    if (r === cases[0]) assert.equal(f.fetched, HEADER_BYTES + 3 * (MiB + 16), 'the header and chunks 0, 7 and 8');
  }
  // The first range opened the file with its header and chunk 0 alone, then fetched chunks 7 and 8 only.
  assert.deepEqual(asked[0], { start: 0, end: HEADER_BYTES + MiB + 16 - 1 });
  assert.deepEqual(asked[1], { start: HEADER_BYTES + 7 * (MiB + 16), end: HEADER_BYTES + 9 * (MiB + 16) - 1 });
});

test('a flipped byte in a later chunk errors the stream after the good chunks; never wrong bytes', async () => {
  const plain = pseudoRandom(4 * MiB, 5);
  const { cipher, key } = await served(plain);
  cipher[HEADER_BYTES + 2 * (MiB + 16) + 500] ^= 1;
  const f = new SealedFile(key, cipher.length, async () => new Response(new Blob([cipher])));
  let ended: unknown;
  const s = await f.whole((e) => (ended = e));
  const reader = s.getReader();
  const got: Uint8Array[] = [];
  await rejectsWith(
    (async () => {
      for (let r = await reader.read(); !r.done; r = await reader.read()) got.push(r.value);
    })(),
    'integrity',
  );
  const total = got.reduce((n, b) => n + b.length, 0);
  assert.ok(total < 2 * MiB, `only the verified chunks before it: ${total}`);
  assert.deepEqual(new Uint8Array(await new Blob(got as Uint8Array<ArrayBuffer>[]).arrayBuffer()), plain.subarray(0, total));
  assert.equal((ended as { code?: string }).code, 'integrity');
});

test('a damaged chunk 0, a truncated body and a wrong length are integrity failures before any byte', async () => {
  const plain = pseudoRandom(2 * MiB, 9);
  const { cipher, key } = await served(plain);
  const flipped = cipher.slice();
  flipped[HEADER_BYTES + 40] ^= 1;
  const whole = (bytes: Uint8Array<ArrayBuffer>) => new SealedFile(key, cipher.length, async () => new Response(new Blob([bytes]))).whole(() => {});
  await rejectsWith(whole(flipped), 'integrity');
  await rejectsWith(read(await whole(cipher.slice(0, cipher.length - 1))), 'integrity');
  await rejectsWith(
    (async () => new SealedFile(key, cipher.length, async () => new Response(new Blob([cipher]), { headers: { 'Content-Length': '5000' } })).whole(() => {}))(),
    'integrity',
  );
});
