/**
 * The only outbound requests of the updater: one GET of the manifest and the
 * download of an asset. Both carry a User-Agent with the running version and
 * nothing else that identifies the install (spec, Versioning 6).
 */
import { createHash } from 'node:crypto';
import { createWriteStream, renameSync, rmSync } from 'node:fs';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';

const MANIFEST_MAX_BYTES = 4 << 20;
const MANIFEST_TIMEOUT_MS = 30_000;
const DOWNLOAD_TIMEOUT_MS = 15 * 60_000;
/** A release bundle (runtime + modules) is ~100 MB; anything far beyond is not ours. */
const DOWNLOAD_MAX_BYTES = 2 * 1024 ** 3;

export const userAgent = (version: string): string => `Filedock/${version}`;

/** Failures of the network layer, each with a reason the status shows. */
export class FetchFailure extends Error {
  constructor(
    readonly reason: 'network' | 'http_status' | 'too_large' | 'truncated' | 'checksum_mismatch' | 'manifest_invalid',
    message: string,
  ) {
    super(message);
    this.name = 'FetchFailure';
  }
}

async function get(url: string, version: string, timeoutMs: number): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(url, {
      headers: { 'user-agent': userAgent(version), accept: 'application/json, */*' },
      redirect: 'follow',
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (e) {
    throw new FetchFailure('network', `GET ${url}: ${(e as Error).cause ?? (e as Error).message}`);
  }
  if (!res.ok) {
    await res.body?.cancel();
    throw new FetchFailure('http_status', `GET ${url}: HTTP ${res.status}`);
  }
  return res;
}

/** Fetches and JSON-parses the manifest; throws FetchFailure (never a validation error: that is the caller's). */
export async function fetchManifestJson(url: string, version: string): Promise<unknown> {
  const res = await get(url, version, MANIFEST_TIMEOUT_MS);
  const declared = Number(res.headers.get('content-length') ?? 0);
  if (declared > MANIFEST_MAX_BYTES) {
    await res.body?.cancel();
    throw new FetchFailure('too_large', `manifest is ${declared} bytes`);
  }
  let text: string;
  try {
    text = await res.text();
  } catch (e) {
    throw new FetchFailure('truncated', `manifest body: ${(e as Error).message}`);
  }
  if (text.length > MANIFEST_MAX_BYTES) throw new FetchFailure('too_large', 'manifest too large');
  try {
    return JSON.parse(text);
  } catch {
    throw new FetchFailure('manifest_invalid', 'manifest is not JSON');
  }
}

/**
 * Streams `url` to `dest`, hashing on the way; `dest` exists only when the
 * body was complete and its sha256 equals `sha256`. On any failure the partial
 * file is removed and FetchFailure says why.
 */
export async function downloadVerified(url: string, dest: string, sha256: string, version: string): Promise<void> {
  const res = await get(url, version, DOWNLOAD_TIMEOUT_MS);
  const declared = res.headers.get('content-length');
  if (declared !== null && Number(declared) > DOWNLOAD_MAX_BYTES) {
    await res.body?.cancel();
    throw new FetchFailure('too_large', `asset is ${declared} bytes`);
  }
  const part = `${dest}.part`;
  const hash = createHash('sha256');
  let bytes = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      bytes += chunk.length;
      if (bytes > DOWNLOAD_MAX_BYTES) return done(new FetchFailure('too_large', 'asset exceeds the size bound'));
      hash.update(chunk);
      done(null, chunk);
    },
  });
  try {
    if (!res.body) throw new FetchFailure('truncated', 'empty response');
    await pipeline(Readable.fromWeb(res.body as WebReadableStream<Uint8Array>), meter, createWriteStream(part, { mode: 0o600 }));
    if (declared !== null && bytes !== Number(declared)) throw new FetchFailure('truncated', `got ${bytes} of ${declared} bytes`);
    const got = hash.digest('hex');
    if (got !== sha256) throw new FetchFailure('checksum_mismatch', `sha256 ${got} does not match the manifest's ${sha256}`);
    renameSync(part, dest);
  } catch (e) {
    rmSync(part, { force: true });
    if (e instanceof FetchFailure) throw e;
    throw new FetchFailure('truncated', `download of ${url} broke off: ${(e as Error).message}`);
  }
}
