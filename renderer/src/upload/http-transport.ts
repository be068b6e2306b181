/**
 * The queue's Transport over HTTP. XMLHttpRequest, not fetch, because only XHR
 * reports upload progress. Presigned parts go straight to the storage (the
 * storage's CORS must expose `ETag`); the others through the server.
 */
import { api, ApiError, toApiError, withQuery } from '../api/client';
import type { UploadSession, UploadStatus } from '../api/types';
import type { PendingRecord, PendingStore, Transport } from './upload-queue';
import { authHeaders } from '../device/device-key';
import { withBase } from '../lib/base';

/** One XHR as a promise: resolves with the response, rejects with ApiError / AbortError. */
function send(
  method: string,
  url: string,
  body: XMLHttpRequestBodyInit,
  headers: Record<string, string>,
  onProgress: (n: number) => void,
  signal: AbortSignal,
  sameOrigin = true,
): Promise<XMLHttpRequest> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new DOMException('aborted', 'AbortError'));
    const x = new XMLHttpRequest();
    x.open(method, sameOrigin ? withBase(url) : url);
    x.withCredentials = sameOrigin;
    // A paired device signs its own server's requests with its key; presigned storage URLs carry their own signature.
    for (const [k, v] of Object.entries(sameOrigin ? { ...authHeaders(), ...headers } : headers)) x.setRequestHeader(k, v);
    x.upload.onprogress = (e) => onProgress(e.loaded);
    const abort = () => x.abort();
    signal.addEventListener('abort', abort, { once: true });
    x.onabort = () => reject(new DOMException('aborted', 'AbortError'));
    x.onerror = () => reject(new ApiError(0, { error: 'network', message: '' }, null));
    x.onload = async () => {
      signal.removeEventListener('abort', abort);
      if (x.status >= 200 && x.status < 300) return resolve(x);
      const res = new Response(x.responseText || null, {
        status: x.status,
        statusText: x.statusText,
        headers: { 'Content-Type': 'application/json', 'Retry-After': x.getResponseHeader('Retry-After') ?? '' },
      });
      reject(await toApiError(res));
    };
    x.send(body);
  });
}

async function sha256Hex(b: Blob): Promise<string | null> {
  if (!globalThis.crypto?.subtle) return null; // Plain-HTTP LAN pages have no WebCrypto.
  const d = await crypto.subtle.digest('SHA-256', await b.arrayBuffer());
  return [...new Uint8Array(d)].map((x) => x.toString(16).padStart(2, '0')).join('');
}

export const httpTransport: Transport = {
  async simple(folder, file, onProgress, signal) {
    const fd = new FormData();
    fd.append('path', folder);
    fd.append('file', file, file.name);
    await send('POST', '/api/files/upload', fd, {}, onProgress, signal);
  },
  init: (req, signal) => api<UploadSession>('/api/files/upload/init', { body: req, signal }),
  async part(uploadId, part, body, url, onProgress, signal, sha256) {
    if (url) {
      const x = await send('PUT', url, body, {}, onProgress, signal, false);
      return x.getResponseHeader('ETag') ?? '';
    }
    const sum = sha256 ?? (await sha256Hex(body));
    const x = await send(
      'POST',
      withQuery('/api/files/upload/chunk', { upload_id: uploadId, part }),
      body,
      { 'Content-Type': 'application/octet-stream', ...(sum ? { 'X-Chunk-SHA256': sum } : {}) },
      onProgress,
      signal,
    );
    return (JSON.parse(x.responseText) as { etag: string }).etag;
  },
  status: (uploadId, signal) => api<UploadStatus>('/api/files/upload/status', { query: { upload_id: uploadId }, signal }),
  finalize: async (uploadId, etags, signal) => {
    await api('/api/files/upload/finalize', { body: { upload_id: uploadId, etags }, signal });
  },
  abort: async (uploadId) => {
    await api('/api/files/upload/abort', { body: { upload_id: uploadId } });
  },
};

const KEY = 'filedock.uploads';

/** Pending uploads in localStorage, so a reload can offer to resume them. */
export const localPendingStore: PendingStore = {
  list() {
    try {
      return (JSON.parse(localStorage.getItem(KEY) ?? '[]') as PendingRecord[]).filter((r) => r && r.upload_id);
    } catch {
      return [];
    }
  },
  save(r) {
    localStorage.setItem(KEY, JSON.stringify([...this.list().filter((x) => x.key !== r.key), r]));
  },
  remove(key) {
    localStorage.setItem(KEY, JSON.stringify(this.list().filter((x) => x.key !== key)));
  },
};
