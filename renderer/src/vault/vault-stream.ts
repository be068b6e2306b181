/**
 * The page's side of the vault's stream worker (src/vault-sw/sw.ts; docs/vault.md, "Streaming"): hands
 * it one file's content key under a random one-time id and points a hidden frame (a download) or a
 * player frame (media) at /vault-stream/<id>/…. Used by the Files page and the public link page; where
 * service workers are unavailable (`canStream()` false: not a secure context, or a browser without them)
 * the callers keep decrypting into a Blob in the page.
 */
import { VaultError } from './crypto/errors';
import type { StreamSource, ToWorker, WorkerNews } from '../vault-sw/protocol';

const SCOPE = '/vault-stream/';
/** A ping this often keeps the worker (and the file it holds for this page) from being stopped as idle. */
const KEEP_MS = 10_000;
/**
 * A download's hidden frame goes this long after the worker answered it: the browser decides at the answer's
 * headers that it is a download (the frame then keeps only its empty document), and a download, once the
 * download manager holds it, outlives the frame. The margin covers a loaded machine between the two.
 */
const FRAME_AFTER_START_MS = 5_000;
/** A download the worker was not asked for in this long is given up (its frame was blocked or never loaded). */
const START_MS = 120_000;

export const canStream = (): boolean => globalThis.isSecureContext === true && 'serviceWorker' in navigator;

/** The worker could not be registered (blocked by a policy, or a browser setting): the callers fall back to a Blob. */
export class StreamUnavailable extends Error {}

let active: Promise<ServiceWorker> | undefined;

/** The activated worker, registered on first use (its script lives in its scope, so no header is needed). */
function worker(): Promise<ServiceWorker> {
  active ??= (async () => {
    const reg = await navigator.serviceWorker
      .register(`${SCOPE}sw.js`, { scope: SCOPE, type: 'module', updateViaCache: 'none' })
      .catch((e: Error) => Promise.reject(new StreamUnavailable(e.message)));
    const w = reg.active ?? reg.waiting ?? reg.installing;
    if (!w) throw new StreamUnavailable('The stream worker did not start');
    if (w.state !== 'activated')
      await new Promise<void>((resolve, reject) =>
        w.addEventListener('statechange', () => {
          if (w.state === 'activated') resolve();
          else if (w.state === 'redundant') reject(new StreamUnavailable('The stream worker did not start'));
        }),
      );
    return reg.active ?? w;
  })();
  active.catch(() => (active = undefined));
  return active;
}

const newId = () => Array.from(crypto.getRandomValues(new Uint8Array(18)), (b) => b.toString(16).padStart(2, '0')).join('');

/** A failure the worker reported, as the callers' error types (an integrity failure stays a VaultError). */
function failureOf(news: Extract<WorkerNews, { type: 'error' }>): Error {
  if (news.code === 'integrity') return new VaultError('integrity');
  return new Error(news.message);
}

interface Handed {
  id: string;
  w: ServiceWorker;
  /** Resolves on the worker's `started` (a download's answer went out). */
  started: Promise<void>;
  /** Resolves on the worker's `done`, rejects on its error. */
  finished: Promise<void>;
  keep(): () => void;
}

/** Gives the worker `source` under a new id; answers once it holds it. */
async function hand(source: StreamSource): Promise<Handed> {
  const w = await worker();
  const id = newId();
  const ch = new MessageChannel();
  let added!: () => void;
  let refused!: (e: Error) => void;
  const ready = new Promise<void>((res, rej) => ([added, refused] = [res, rej]));
  let finish!: () => void;
  let fail!: (e: Error) => void;
  const finished = new Promise<void>((res, rej) => ([finish, fail] = [res, rej]));
  finished.catch(() => {});
  let start!: () => void;
  const started = new Promise<void>((res) => (start = res));
  ch.port1.onmessage = (ev: MessageEvent<WorkerNews>) => {
    const news = ev.data;
    if (news.type === 'added') added();
    else if (news.type === 'started') start();
    else if (news.type === 'done') finish();
    else {
      refused(failureOf(news));
      fail(failureOf(news));
    }
  };
  const msg: ToWorker = { type: 'add', id, source };
  w.postMessage(msg, [ch.port2, source.contentKey]);
  await ready;
  const keep = () => {
    const t = setInterval(() => w.postMessage({ type: 'keep', id } satisfies ToWorker), KEEP_MS);
    return () => clearInterval(t);
  };
  return { id, w, started, finished, keep };
}

/**
 * Saves the decrypted file through the worker: Chromium's download manager writes it to disk as the
 * worker decrypts. Resolves when the last byte left the worker; rejects with `VaultError('integrity')`
 * (the download then fails in the browser, never completes with bytes that did not verify).
 */
export async function streamDownload(source: Omit<StreamSource, 'mode'>): Promise<void> {
  const h = await hand({ ...source, mode: 'download' });
  const stop = h.keep();
  const frame = Object.assign(document.createElement('iframe'), { hidden: true, src: `${SCOPE}${h.id}/${encodeURIComponent(source.name)}` });
  frame.setAttribute('aria-hidden', 'true');
  document.body.append(frame);
  let bound: ReturnType<typeof setTimeout> | undefined;
  const unasked = new Promise<never>((_, reject) => {
    bound = setTimeout(() => reject(new Error('The download did not start')), START_MS);
  });
  // The frame goes once the browser holds the download, not one left behind per download until the page goes.
  let answered = false;
  void h.started.then(() => {
    answered = true;
    clearTimeout(bound);
    setTimeout(() => frame.remove(), FRAME_AFTER_START_MS);
  });
  try {
    await Promise.race([h.finished, unasked]);
  } finally {
    clearTimeout(bound);
    stop();
    // Failed or given up before the worker answered (a bad chunk 0, a refused fetch, never asked): no download holds the frame.
    if (!answered) {
      frame.remove();
      h.w.postMessage({ type: 'forget', id: h.id } satisfies ToWorker);
    }
  }
}

/** A player page for a media file, decrypted by ranges as it plays and seeks; `close` forgets the file. */
export async function streamMedia(source: Omit<StreamSource, 'mode'>): Promise<{ url: string; close(): void }> {
  const h = await hand({ ...source, mode: 'media' });
  const stop = h.keep();
  return {
    url: `${SCOPE}${h.id}/player`,
    close() {
      stop();
      h.w.postMessage({ type: 'forget', id: h.id } satisfies ToWorker);
    },
  };
}
