/**
 * Encrypted uploads' parts sealed in workers (crypto/seal.worker.ts), so the page's thread stays free for
 * the upload itself. Up to two workers (two cores); each part goes to the one with fewer parts waiting,
 * which is told the file (its Blob, header and content key) the first time it gets one of its parts.
 * Where no worker runs (it could not start, or stopped), the parts are sealed on the page as before.
 */
import type { EncryptedBlob } from './crypto';
import type { SourcePart } from '../upload/upload-queue';

interface Slot {
  worker: Worker;
  dead: boolean;
  /** Files this worker was told about. */
  open: Set<number>;
  waiting: Map<number, { resolve(p: SourcePart): void; reject(e: unknown): void }>;
}

const MAX_WORKERS = Math.max(1, Math.min(2, globalThis.navigator?.hardwareConcurrency || 1));
const slots: Slot[] = [];
let seq = 0;

function start(): Slot | null {
  let worker: Worker;
  try {
    worker = new Worker(new URL('./crypto/seal.worker.ts', import.meta.url), { type: 'module' });
  } catch {
    return null;
  }
  const s: Slot = { worker, dead: false, open: new Set(), waiting: new Map() };
  worker.addEventListener('message', (ev: MessageEvent) => {
    const { n, body, sha256, error } = ev.data as { n: number; body?: Blob; sha256?: string; error?: { name: string; message: string; code?: string } };
    const w = s.waiting.get(n);
    s.waiting.delete(n);
    if (error) w?.reject(Object.assign(new Error(error.message), error));
    else w?.resolve({ body: body!, sha256: sha256! });
  });
  worker.addEventListener('error', () => {
    s.dead = true;
    slots.splice(slots.indexOf(s), 1);
    for (const w of s.waiting.values()) w.reject(new Error('the encryption worker stopped'));
    s.waiting.clear();
  });
  slots.push(s);
  return s;
}

/** The worker with the fewest parts waiting; another one started while there is room and none is idle. */
function pick(): Slot | null {
  const least = slots.reduce<Slot | null>((a, s) => (!a || s.waiting.size < a.waiting.size ? s : a), null);
  if (least && (least.waiting.size === 0 || slots.length >= MAX_WORKERS)) return least;
  return start() ?? least;
}

/** The parts of `enc` (the encryption of `file`), each with its SHA-256; `close` when the upload is over. */
export function sealedParts(file: Blob, enc: EncryptedBlob): { slice(start: number, end: number): Promise<SourcePart>; close(): void } {
  const id = ++seq;
  return {
    async slice(a, b) {
      const s = pick();
      if (!s) return new Blob([(await enc.slice(a, b)) as Uint8Array<ArrayBuffer>]);
      if (!s.open.has(id)) {
        s.open.add(id);
        s.worker.postMessage({ open: id, blob: file, header: enc.header, key: enc.contentKey });
      }
      const n = ++seq;
      return new Promise<SourcePart>((resolve, reject) => {
        s.waiting.set(n, { resolve, reject });
        s.worker.postMessage({ slice: n, id, start: a, end: b });
      });
    },
    close() {
      for (const s of slots) if (s.open.delete(id)) s.worker.postMessage({ close: id });
    },
  };
}
