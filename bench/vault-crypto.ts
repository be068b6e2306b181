/**
 * The vault's cryptography in Node (renderer/src/vault/crypto/, issue 31): encrypting 256 MiB the way the
 * uploader does (8 MiB slices of `encryptBlob`) and decrypting it through `decryptStream` (in 64 KiB pieces,
 * as a fetch body arrives, and in 8 MiB pieces), against the anchor: plain AES-256-GCM through the same
 * WebCrypto over the same bytes, one call per MiB, one at a time and four in flight. Reading the Blob's
 * 8 MiB slices alone is timed too (Node's in-memory Blob reads at only ~100-150 MB/s here, and encryptBlob
 * pays it), and encryptBlob over the bytes without a Blob, which is the module's own cost. Then
 * the default Argon2id's time. A first round warms WebCrypto up (its first calls are several times slower). Alternating runs, medians; the machine's load is printed with them.
 *
 *   node --import tsx bench/vault-crypto.ts        (BENCH_RUNS=3, BENCH_MIB=256)
 */
import { execSync } from 'node:child_process';
import { randomFillSync } from 'node:crypto';
import { createVault, decryptStream, encryptBlob, FolderKeyring, folderKeyFrom, newFolderKey, unlockVault } from '../renderer/src/vault/crypto/index';
import { median, table } from './lib';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const MIB = Number(process.env.BENCH_MIB ?? 256);
const PART = 8 << 20;
const subtle = globalThis.crypto.subtle;

const data = new Uint8Array(MIB << 20);
for (let at = 0; at < data.length; at += 1 << 16) randomFillSync(data, at, Math.min(1 << 16, data.length - at));
const blob = new Blob([data]);
/** The same bytes behind the two calls encryptBlob makes of a Blob, answered from memory at once: our cost without Node's Blob. */
const bytesAsBlob = {
  size: data.length,
  slice: (a: number, b: number) => ({ arrayBuffer: async () => data.buffer.slice(a, b) }),
} as unknown as Blob;
const mbps = (ms: number) => Math.round(data.length / 1e6 / (ms / 1000));

async function timed(work: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await work();
  return performance.now() - t0;
}

/** Plain AES-256-GCM, one WebCrypto call per MiB, `inFlight` at a time. */
async function anchor(op: 'encrypt' | 'decrypt', key: CryptoKey, input: Uint8Array<ArrayBuffer>[], inFlight: number): Promise<Uint8Array<ArrayBuffer>[]> {
  const out: Uint8Array<ArrayBuffer>[] = [];
  for (let i = 0; i < input.length; i += inFlight) {
    const batch = input.slice(i, i + inFlight).map((c, k) => subtle[op]({ name: 'AES-GCM', iv: new Uint8Array(12).fill((i + k) & 255) }, key, c));
    for (const r of await Promise.all(batch)) out.push(new Uint8Array(r));
  }
  return out;
}

/** Feeds `cipher` to `decryptStream` in pieces of `piece` bytes; answers the plaintext byte count. */
async function decryptIn(ring: FolderKeyring, cipher: Uint8Array, piece: number): Promise<number> {
  const stream = decryptStream(ring, cipher.length);
  let n = 0;
  const reading = (async () => {
    const reader = stream.readable.getReader();
    for (let r = await reader.read(); !r.done; r = await reader.read()) n += r.value.length;
  })();
  const writer = stream.writable.getWriter();
  for (let at = 0; at < cipher.length; at += piece) await writer.write(cipher.subarray(at, at + piece));
  await writer.close();
  await reading;
  return n;
}

const load = () =>
  execSync('uptime')
    .toString()
    .trim()
    .replace(/.*load average: /, '');
console.log(`# vault crypto, ${MIB} MiB, ${RUNS} runs; load before: ${load()}`);
const ring = new FolderKeyring(1, [await folderKeyFrom(newFolderKey(), 1, 1)]);
const key = await subtle.importKey('raw', newFolderKey(), 'AES-GCM', false, ['encrypt', 'decrypt']);
const mibs = Array.from({ length: MIB }, (_, i) => data.subarray(i << 20, (i + 1) << 20));

const t: Record<string, number[]> = {};
const add = (k: string, ms: number) => (t[k] ??= []).push(ms);
let cipher = new Uint8Array(0);
for (let run = -1; run < RUNS; run++) {
  if (run === 0) for (const k of Object.keys(t)) t[k] = []; // the warm-up round does not count
  let sealed: Uint8Array<ArrayBuffer>[] = [];
  add('anchor encrypt, 1 MiB calls, 1 in flight', await timed(async () => (sealed = await anchor('encrypt', key, mibs, 1))));
  add('anchor encrypt, 1 MiB calls, 4 in flight', await timed(() => anchor('encrypt', key, mibs, 4)));
  add(
    'Blob 8 MiB slices, read only',
    await timed(async () => {
      for (let at = 0; at < data.length; at += PART) await blob.slice(at, at + PART).arrayBuffer();
    }),
  );
  add(
    'encryptBlob, 8 MiB slices',
    await timed(async () => {
      const enc = await encryptBlob(blob, ring);
      cipher = new Uint8Array(enc.size);
      for (let at = 0; at < enc.size; at += PART) cipher.set(await enc.slice(at, at + PART), at);
    }),
  );
  add(
    'encryptBlob, 8 MiB slices, Blob reads excluded',
    await timed(async () => {
      const enc = await encryptBlob(bytesAsBlob, ring);
      for (let at = 0; at < enc.size; at += PART) await enc.slice(at, at + PART);
    }),
  );
  add('anchor decrypt, 1 MiB calls, 1 in flight', await timed(() => anchor('decrypt', key, sealed, 1)));
  add('decryptStream, 64 KiB pieces', await timed(() => decryptIn(ring, cipher, 64 << 10)));
  add('decryptStream, 8 MiB pieces', await timed(() => decryptIn(ring, cipher, PART)));
}
table(
  `${MIB} MiB in Node (median of ${RUNS})`,
  Object.entries(t).map(([what, ms]) => ({ what, ms: Math.round(median(ms)), 'MB/s': mbps(median(ms)), 'each run, MB/s': ms.map(mbps).join(' ') })),
);

const argon: number[] = [];
for (let run = 0; run < RUNS; run++) {
  const made = await createVault('bench passphrase', 1);
  argon.push(await timed(() => unlockVault(made.record, 'bench passphrase', 1)));
}
table('Argon2id default (m = 64 MiB, t = 3, p = 1): unlockVault', [
  { runs: RUNS, 'median ms': Math.round(median(argon)), 'min ms': Math.round(Math.min(...argon)) },
]);
console.log(`\nload after: ${load()}`);
