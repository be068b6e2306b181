/**
 * Reads one file of a store over HTTP(S), bounded in time and size: a store
 * that accepts and never answers costs at most `timeoutMs`, and a body over
 * `maxBytes` is refused from its Content-Length or, without one, as soon as
 * the count passes the cap (the rest is never read). A conditional GET
 * (`If-None-Match`) answers `not_modified` on 304.
 */
import { isAppError } from '../errors';
import { storeError } from './format';

export interface StoreFetchOptions {
  timeoutMs: number;
  maxBytes: number;
  etag?: string | null;
  /** Hears the bytes read so far as they arrive (an install's progress). */
  onBytes?: (done: number) => void;
  /** Stops the request (an install's operation cancelled): the caller's abort reason is thrown. */
  signal?: AbortSignal;
}

export type StoreFetchResult = { not_modified: true } | { not_modified: false; bytes: Buffer; etag: string | null };

export async function fetchStoreFile(url: string, o: StoreFetchOptions): Promise<StoreFetchResult> {
  const timer = AbortSignal.timeout(o.timeoutMs);
  const signal = o.signal ? AbortSignal.any([timer, o.signal]) : timer;
  const timedOut = () => (o.signal?.aborted ? o.signal.reason : storeError('store_unreachable', 'timeout', { url, timeout_ms: o.timeoutMs }));
  let res: Response;
  try {
    res = await fetch(url, { signal, redirect: 'follow', headers: o.etag ? { 'if-none-match': o.etag } : {} });
  } catch (e) {
    if (signal.aborted) throw timedOut();
    throw storeError('store_unreachable', 'unreachable', { url, detail: String((e as Error).cause ?? (e as Error).message).slice(0, 200) });
  }
  if (res.status === 304 && o.etag) {
    await res.body?.cancel();
    return { not_modified: true };
  }
  if (res.status !== 200) {
    await res.body?.cancel();
    throw storeError('store_unreachable', 'http_status', { url, status: res.status });
  }
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (declared > o.maxBytes) {
    await res.body?.cancel();
    throw storeError('store_invalid', 'too_large', { url, max: o.maxBytes });
  }
  const chunks: Buffer[] = [];
  let size = 0;
  const reader = res.body!.getReader();
  try {
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      size += r.value.length;
      if (size > o.maxBytes) {
        await reader.cancel();
        throw storeError('store_invalid', 'too_large', { url, max: o.maxBytes });
      }
      chunks.push(Buffer.from(r.value));
      o.onBytes?.(size);
    }
  } catch (e) {
    if (signal.aborted) throw timedOut();
    if (isAppError(e)) throw e;
    throw storeError('store_unreachable', 'unreachable', { url, detail: String((e as Error).message).slice(0, 200) });
  }
  return { not_modified: false, bytes: Buffer.concat(chunks), etag: res.headers.get('etag') };
}
