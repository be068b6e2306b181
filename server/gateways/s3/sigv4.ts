/**
 * AWS Signature Version 4 as the S3 gateway checks it: the Authorization
 * header and presigned query forms, the canonical request, the signing key,
 * and the per-chunk signatures of `aws-chunked` bodies (see chunked.ts).
 *
 * Replay: a signature covers the method, path, query, the signed headers and
 * the time; the header form is refused more than MAX_SKEW_MS away from our
 * clock, a presigned URL after its `X-Amz-Expires` (at most 7 days). SigV4
 * has no nonce: within that window replay.ts refuses a completed write sent
 * again; TLS in front of the listener keeps requests from being seen.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { S3Error } from './errors';

/** Clock skew allowed for header-signed requests (AWS: 15 minutes). */
export const MAX_SKEW_MS = 15 * 60_000;
/** The longest a presigned URL may live (AWS: 7 days). */
const MAX_PRESIGN_S = 7 * 86_400;

export const UNSIGNED = 'UNSIGNED-PAYLOAD';
export const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

/** What a request claims: who, when, for which scope, and what must be signed. */
export interface SignedClaim {
  accessKeyId: string;
  /** `YYYYMMDDTHHMMSSZ` */
  amzDate: string;
  /** `<date>/<region>/s3/aws4_request` */
  scope: string;
  signedHeaders: string[];
  signature: string;
  /** The payload hash the signature covers (hex, UNSIGNED-PAYLOAD or a STREAMING-* mode). */
  payloadHash: string;
  presigned: boolean;
}

export interface RequestParts {
  method: string;
  /** The path exactly as sent (still percent-encoded). */
  rawPath: string;
  /** The query string as sent, without `?`. */
  rawQuery: string;
  headers: Record<string, string | string[] | undefined>;
}

/** Reads the claim of a request; null when it carries none (anonymous). Malformed → AccessDenied / AuthorizationQueryParametersError. */
export function readClaim(r: RequestParts, query: URLSearchParams, now = Date.now()): SignedClaim | null {
  const auth = header(r.headers, 'authorization');
  if (auth) {
    const m = /^AWS4-HMAC-SHA256\s+Credential=([^,\s]+)\s*,\s*SignedHeaders=([^,\s]+)\s*,\s*Signature=([0-9a-f]{64})\s*$/.exec(auth);
    if (!m) throw new S3Error('AccessDenied', 'Only AWS Signature Version 4 (AWS4-HMAC-SHA256) is supported.');
    const amzDate = header(r.headers, 'x-amz-date') ?? '';
    checkTime(amzDate, now);
    return {
      ...credential(m[1], amzDate),
      signedHeaders: m[2].split(';'),
      signature: m[3],
      payloadHash: header(r.headers, 'x-amz-content-sha256') ?? UNSIGNED,
      presigned: false,
    };
  }
  if (!query.has('X-Amz-Signature')) return null;
  if (query.get('X-Amz-Algorithm') !== 'AWS4-HMAC-SHA256') throw new S3Error('AuthorizationQueryParametersError', 'X-Amz-Algorithm must be AWS4-HMAC-SHA256.');
  const amzDate = query.get('X-Amz-Date') ?? '';
  const expires = Number(query.get('X-Amz-Expires'));
  const at = parseAmzDate(amzDate);
  if (at === null || !Number.isInteger(expires) || expires < 1 || expires > MAX_PRESIGN_S) {
    throw new S3Error('AuthorizationQueryParametersError', 'X-Amz-Date and X-Amz-Expires (1 to 604800 seconds) are required.');
  }
  if (at - now > MAX_SKEW_MS) throw new S3Error('AccessDenied', 'Request is not valid yet.');
  if (now > at + expires * 1000) throw new S3Error('AccessDenied', 'Request has expired');
  const signature = query.get('X-Amz-Signature') ?? '';
  if (!/^[0-9a-f]{64}$/.test(signature)) throw new S3Error('SignatureDoesNotMatch');
  return {
    ...credential(query.get('X-Amz-Credential') ?? '', amzDate),
    signedHeaders: (query.get('X-Amz-SignedHeaders') ?? 'host').split(';'),
    signature,
    payloadHash: UNSIGNED,
    presigned: true,
  };
}

/** Checks the claim's signature with `secret`; SignatureDoesNotMatch otherwise. Returns the signing key (for chunk signatures). */
export function verify(r: RequestParts, claim: SignedClaim, secret: string): Buffer {
  if (!claim.signedHeaders.includes('host')) throw new S3Error('AccessDenied', 'The host header must be signed.');
  const key = signingKey(secret, claim.scope);
  // Clients encode the path by one of two rules (as sent, or S3's own re-encoding of the decoded path): accept either.
  const paths = new Set([r.rawPath, encodePath(safeDecode(r.rawPath))]);
  for (const path of paths) {
    const canonical = [
      r.method,
      path,
      canonicalQuery(r.rawQuery, claim.presigned),
      canonicalHeaders(r.headers, claim.signedHeaders),
      claim.signedHeaders.join(';'),
      claim.payloadHash,
    ].join('\n');
    const toSign = ['AWS4-HMAC-SHA256', claim.amzDate, claim.scope, sha256hex(canonical)].join('\n');
    if (sameHex(hmac(key, toSign).toString('hex'), claim.signature)) return key;
  }
  throw new S3Error('SignatureDoesNotMatch');
}

/** The signature of one `aws-chunked` chunk, chained from the previous one (the seed is the request's). */
export function chunkSignature(key: Buffer, claim: SignedClaim, previous: string, chunkSha256: string): string {
  return hmac(key, ['AWS4-HMAC-SHA256-PAYLOAD', claim.amzDate, claim.scope, previous, EMPTY_SHA256, chunkSha256].join('\n')).toString('hex');
}

export function sameHex(a: string, b: string): boolean {
  return a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
}

export const sha256hex = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');

/** S3's URI encoding: everything but unreserved characters (and `/` in paths) as %XX of the UTF-8 bytes. */
export function uriEncode(s: string, keepSlash = false): string {
  const e = encodeURIComponent(s).replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
  return keepSlash ? e.replace(/%2F/g, '/') : e;
}

const encodePath = (p: string): string => uriEncode(p, true);

export function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    throw new S3Error('InvalidURI', "Couldn't parse the specified URI.");
  }
}

function credential(raw: string, amzDate: string): { accessKeyId: string; scope: string; amzDate: string } {
  const parts = raw.split('/');
  if (parts.length !== 5 || parts[3] !== 's3' || parts[4] !== 'aws4_request' || !/^\d{8}$/.test(parts[1])) {
    throw new S3Error('AuthorizationHeaderMalformed', 'The credential must be <key id>/<date>/<region>/s3/aws4_request.');
  }
  if (!amzDate.startsWith(parts[1])) throw new S3Error('AuthorizationHeaderMalformed', 'The credential date does not match X-Amz-Date.');
  return { accessKeyId: parts[0], scope: parts.slice(1).join('/'), amzDate };
}

function checkTime(amzDate: string, now: number): void {
  const at = parseAmzDate(amzDate);
  if (at === null) throw new S3Error('AccessDenied', 'AWS authentication requires a valid X-Amz-Date header.');
  if (Math.abs(at - now) > MAX_SKEW_MS) throw new S3Error('RequestTimeTooSkewed');
}

/** `YYYYMMDDTHHMMSSZ` as epoch ms, or null. */
export function parseAmzDate(s: string): number | null {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(s);
  return m ? Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]) : null;
}

/** The sorted, strictly re-encoded query (a presigned URL's own signature left out). */
function canonicalQuery(raw: string, presigned: boolean): string {
  const pairs: Array<[string, string]> = [];
  for (const part of raw.split('&')) {
    if (part === '') continue;
    const i = part.indexOf('=');
    const k = safeDecode(i < 0 ? part : part.slice(0, i));
    if (presigned && k === 'X-Amz-Signature') continue;
    pairs.push([uriEncode(k), uriEncode(i < 0 ? '' : safeDecode(part.slice(i + 1)))]);
  }
  pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
  return pairs.map(([k, v]) => `${k}=${v}`).join('&');
}

function canonicalHeaders(h: RequestParts['headers'], names: string[]): string {
  return names.map((n) => `${n}:${(header(h, n) ?? '').trim().replace(/\s+/g, ' ')}\n`).join('');
}

function header(h: RequestParts['headers'], name: string): string | undefined {
  const v = h[name];
  return Array.isArray(v) ? v.join(',') : v;
}

function signingKey(secret: string, scope: string): Buffer {
  const [date, region, service] = scope.split('/');
  return hmac(hmac(hmac(hmac(`AWS4${secret}`, date), region), service), 'aws4_request');
}

const hmac = (key: string | Buffer, data: string): Buffer => createHmac('sha256', key).update(data).digest();
