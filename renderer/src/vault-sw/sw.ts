/**
 * The vault's stream worker (docs/vault.md, "Streaming"): a service worker whose scope is /vault-stream/.
 * A page hands it one file's content key (never a folder key) under a random one-time id; the worker then
 * answers /vault-stream/<id>/… with the ciphertext fetched from this origin and decrypted as it passes:
 * a download (`Content-Disposition: attachment`, the true length) that Chromium's download manager writes
 * to disk as it comes, or, for media, a small player page whose <video>/<audio> asks ranges that are
 * answered with 206 by decrypting only the chunks they cover. Nothing is persisted; a file is forgotten
 * when its download ends, when the page says so, or after a short idle time.
 */
/// <reference lib="webworker" />
import { importAesKey } from '../vault/crypto/kdf';
import { parseRange } from './ranges';
import { FetchRefused, SealedFile } from './sealed-file';
import type { ToWorker, WorkerNews } from './protocol';

declare const self: ServiceWorkerGlobalScope;

/** A file not asked for (and not kept alive by its page) this long is forgotten. */
const IDLE_MS = 60_000;
/**
 * A media range answers at most this many bytes (a shorter 206, which players follow with the next
 * range): an open range (`bytes=N-`) then fetches a bounded window, not the rest of the file that a
 * seek would throw away.
 */
const MEDIA_WINDOW = 4 * 1024 * 1024;

interface Entry {
  file: SealedFile;
  name: string;
  type: string;
  mode: 'download' | 'media';
  port: MessagePort;
  touched: number;
  open: number;
}

const files = new Map<string, Entry>();

function sweep(): void {
  const now = Date.now();
  for (const [id, e] of files) if (e.open === 0 && now - e.touched > IDLE_MS) forget(id);
}

function forget(id: string): void {
  files.get(id)?.port.close();
  files.delete(id);
}

const tell = (e: Entry, news: WorkerNews) => e.port.postMessage(news);

self.addEventListener('install', () => void self.skipWaiting());
self.addEventListener('activate', (ev) => ev.waitUntil(self.clients.claim()));

self.addEventListener('message', (ev) => {
  const msg = ev.data as ToWorker;
  sweep();
  if (msg.type === 'add') {
    const port = ev.ports[0];
    const { id, source } = msg;
    ev.waitUntil(
      importAesKey(new Uint8Array(source.contentKey)).then(
        (key) => {
          const file = new SealedFile(key, source.cipherTotal, (range) =>
            fetch(source.url, {
              credentials: source.credentials,
              referrerPolicy: 'no-referrer',
              cache: 'no-store',
              headers: {
                ...source.headers,
                accept: 'application/octet-stream, application/json;q=0.9',
                ...(range ? { range: `bytes=${range.start}-${range.end}` } : {}),
              },
            }),
          );
          files.set(id, { file, name: source.name, type: source.type, mode: source.mode, port, touched: Date.now(), open: 0 });
          port.postMessage({ type: 'added' } satisfies WorkerNews);
        },
        (e) => port.postMessage({ type: 'error', code: 'integrity', message: String(e) } satisfies WorkerNews),
      ),
    );
  } else if (msg.type === 'keep') {
    const e = files.get(msg.id);
    if (e) e.touched = Date.now();
  } else if (msg.type === 'forget') forget(msg.id);
});

self.addEventListener('fetch', (ev) => {
  const url = new URL(ev.request.url);
  const m = url.pathname.match(/^\/vault-stream\/([\w-]{16,64})\/(.*)$/);
  if (url.origin !== location.origin || !m || ev.request.method !== 'GET') return;
  ev.respondWith(answer(m[1], m[2], ev.request));
});

const PLAIN = { 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' };

function failure(status: number, text: string): Response {
  return new Response(text, { status, headers: { ...PLAIN, 'Content-Type': 'text/plain; charset=utf-8' } });
}

async function answer(id: string, rest: string, req: Request): Promise<Response> {
  sweep();
  const e = files.get(id);
  if (!e) return failure(404, 'This address is no longer valid.');
  e.touched = Date.now();
  e.open++;
  let streaming = false;
  // Called once: by the body stream when it ends, else below when no stream was made.
  const ended = (error?: unknown) => {
    e.open--;
    e.touched = Date.now();
    if (e.mode !== 'download') return;
    tell(e, error ? newsOf(error) : { type: 'done' });
    forget(id);
  };
  try {
    if (e.mode === 'download')
      return await download(e, ended, () => {
        streaming = true;
        tell(e, { type: 'started' });
      });
    if (rest === 'player') return player(e);
    return await media(e, req, ended, () => (streaming = true));
  } catch (err) {
    if (!streaming) {
      streaming = true;
      ended(err);
    }
    return failure(err instanceof FetchRefused ? err.status : 409, 'This file could not be verified.');
  } finally {
    if (!streaming) ended();
  }
}

const newsOf = (error: unknown): WorkerNews =>
  error instanceof FetchRefused
    ? { type: 'error', code: 'refused', status: error.status, message: error.message }
    : { type: 'error', code: (error as { code?: string }).code === 'integrity' ? 'integrity' : 'failed', message: String((error as Error)?.message ?? error) };

/** RFC 6266's `filename*` for any name, with an ASCII `filename` beside it. */
function disposition(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

async function download(e: Entry, ended: (error?: unknown) => void, started: () => void): Promise<Response> {
  const body = await e.file.whole(ended);
  started();
  return new Response(body, {
    headers: { ...PLAIN, 'Content-Type': 'application/octet-stream', 'Content-Disposition': disposition(e.name), 'Content-Length': String(e.file.size) },
  });
}

async function media(e: Entry, req: Request, ended: (error?: unknown) => void, started: () => void): Promise<Response> {
  if (e.file.size === undefined) (await e.file.open(false)).cancel();
  const size = e.file.size!;
  const range = parseRange(req.headers.get('range'), size);
  const base = { ...PLAIN, 'Content-Type': e.type, 'Accept-Ranges': 'bytes' };
  if (range === 'unsatisfiable') return new Response(null, { status: 416, headers: { ...base, 'Content-Range': `bytes */${size}` } });
  const want = range ? { start: range.start, end: Math.min(range.end, range.start + MEDIA_WINDOW - 1) } : { start: 0, end: size - 1 };
  if (size === 0) return new Response(null, { headers: { ...base, 'Content-Length': '0' } });
  const body = await e.file.range(want, ended);
  started();
  const length = String(want.end - want.start + 1);
  if (!range) return new Response(body, { headers: { ...base, 'Content-Length': length } });
  return new Response(body, { status: 206, headers: { ...base, 'Content-Length': length, 'Content-Range': `bytes ${want.start}-${want.end}/${size}` } });
}

/** The page a media preview frames: its <video> or <audio> asks this worker for ranges of `media`. */
function player(e: Entry): Response {
  const tag = e.type.startsWith('audio/') ? 'audio' : 'video';
  const html =
    '<!doctype html><html><head><meta charset="utf-8"><style>html,body{margin:0;height:100%;background:#000;display:flex;align-items:center;justify-content:center}' +
    `video,audio{max-width:100%;max-height:100%}</style></head><body><${tag} src="media" controls autoplay></${tag}></body></html>`;
  return new Response(html, {
    headers: {
      ...PLAIN,
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Security-Policy': "default-src 'none'; media-src 'self'; style-src 'unsafe-inline'; frame-ancestors 'self'",
    },
  });
}
