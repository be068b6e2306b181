/**
 * HTTP byte ranges (RFC 9110 §14) as plain data: parsing `Range`, deciding
 * `If-Range`, and the conditional-request check. No transport here.
 */
export interface Span {
  start: number;
  /** Inclusive. */
  end: number;
}

export type RangePlan = { kind: 'full' } | { kind: 'unsatisfiable' } | { kind: 'partial'; spans: Span[] };

/** More ranges than this in one request are answered with the whole file (cheap to serve, no amplification). */
export const MAX_SPANS = 16;

/**
 * Plans the answer to a `Range` header for a file of `size` bytes. A header
 * that is absent, not `bytes=`, or syntactically broken means the full file
 * (the RFC says ignore it); single, open (`a-`) and suffix (`-n`) ranges are
 * clamped to the file; no satisfiable range means 416.
 */
export function planRange(header: string | undefined, size: number): RangePlan {
  if (!header) return { kind: 'full' };
  const m = /^\s*bytes\s*=\s*(.+)$/i.exec(header);
  if (!m) return { kind: 'full' };
  const parts = m[1]
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (parts.length === 0 || parts.length > MAX_SPANS) return { kind: 'full' };
  const spans: Span[] = [];
  for (const part of parts) {
    const r = /^(\d*)-(\d*)$/.exec(part);
    if (!r || (r[1] === '' && r[2] === '')) return { kind: 'full' };
    if (r[1] === '') {
      const n = Number(r[2]);
      if (n === 0 || size === 0) continue;
      spans.push({ start: Math.max(0, size - n), end: size - 1 });
    } else {
      const start = Number(r[1]);
      const end = r[2] === '' ? size - 1 : Math.min(Number(r[2]), size - 1);
      if (r[2] !== '' && Number(r[2]) < start) return { kind: 'full' };
      if (start >= size) continue;
      spans.push({ start, end });
    }
  }
  return spans.length ? { kind: 'partial', spans } : { kind: 'unsatisfiable' };
}

/**
 * Whether a `Range` may be honoured under `If-Range`: the validator must be
 * the current strong ETag or an HTTP date equal to Last-Modified.
 */
export function ifRangeAllows(ifRange: string | undefined, etag: string, mtimeMs: number): boolean {
  if (!ifRange) return true;
  const v = ifRange.trim();
  if (v.startsWith('"') || v.startsWith('W/')) return !v.startsWith('W/') && v === etag;
  const t = Date.parse(v);
  return !Number.isNaN(t) && Math.floor(t / 1000) === Math.floor(mtimeMs / 1000);
}

/**
 * Whether the client's copy is current (answer 304): `If-None-Match` wins
 * (weak comparison); else `If-Modified-Since` at one-second precision.
 */
export function notModified(h: { ifNoneMatch?: string; ifModifiedSince?: string }, etag: string, mtimeMs: number): boolean {
  if (h.ifNoneMatch) {
    const weak = (s: string) => s.trim().replace(/^W\//, '');
    return h.ifNoneMatch.split(',').some((t) => t.trim() === '*' || weak(t) === weak(etag));
  }
  if (h.ifModifiedSince) {
    const t = Date.parse(h.ifModifiedSince);
    return !Number.isNaN(t) && Math.floor(mtimeMs / 1000) <= Math.floor(t / 1000);
  }
  return false;
}

/** `Content-Disposition` with an ASCII fallback and the RFC 5987 UTF-8 name. */
export function contentDisposition(name: string, inline: boolean): string {
  const ascii = name.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
  return `${inline ? 'inline' : 'attachment'}; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}
