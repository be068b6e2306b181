/**
 * The seal worker (docs/vault.md, "Uploads"): an encrypted upload's parts are read, sealed, hashed and made
 * into Blobs here, off the page's thread. Chromium's WebCrypto runs AES-GCM and SHA-256 on the calling
 * thread, so on the page they held the thread for most of an upload (docs/benchmarks.md). Messages:
 *   {open: id, blob, header, key}  one file's plaintext, FDV1 header and content key (the page's own worker)
 *   {slice: n, id, start, end}     → {n, body: Blob, sha256: hex} or {n, error}
 *   {close: id}
 */
import { type Bytes, subtle } from './bytes';
import { type EncryptedBlob, sealer } from './encrypt';

type Message = { open: number; blob: Blob; header: Bytes; key: Bytes } | { slice: number; id: number; start: number; end: number } | { close: number };

const files = new Map<number, Promise<EncryptedBlob>>();
const hex = (b: ArrayBuffer) => Array.from(new Uint8Array(b), (x) => x.toString(16).padStart(2, '0')).join('');

self.addEventListener('message', (ev: MessageEvent<Message>) => {
  const m = ev.data;
  if ('open' in m) files.set(m.open, sealer(m.blob, m.header, m.key));
  else if ('close' in m) files.delete(m.close);
  else void answer(m);
});

async function answer(m: { slice: number; id: number; start: number; end: number }): Promise<void> {
  try {
    const enc = files.get(m.id);
    if (!enc) throw new Error('file closed');
    // One buffer, not pieces: the hash needs the part whole, and the Blob then takes it in one copy.
    const bytes = await (await enc).slice(m.start, m.end);
    const sha256 = hex(await subtle.digest('SHA-256', bytes));
    self.postMessage({ n: m.slice, body: new Blob([bytes]), sha256 });
  } catch (e) {
    self.postMessage({ n: m.slice, error: { name: (e as Error).name, message: (e as Error).message, code: (e as { code?: string }).code } });
  }
}
