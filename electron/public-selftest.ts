/**
 * Self-test of the public-links set-up: given the URL a tunnel gives the
 * public listener, checks from the outside that share routes answer (and that
 * it is us answering), that admin and sign-in routes are NOT reachable, that
 * the clocks agree (expiry and signed links depend on it) and that the tunnel
 * lets an upload chunk through. Each check reports on its own; none throws.
 */
import { randomBytes } from 'node:crypto';
import type { SelfTestCheck, SelfTestReport } from './types';

export interface SelfTestOptions {
  /** The public URL to test (the tunnel's address). */
  publicUrl: string;
  /** Our own public listener on loopback: its answer identifies us behind the tunnel. */
  localPublicUrl: string;
  /** Largest clock difference accepted. */
  maxSkewMs?: number;
  /** Body size the tunnel must pass (the server's upload chunk size). */
  bodyBytes?: number;
  timeoutMs?: number;
}

/** Status codes that prove a route ran behind the public URL (auth asked, body validated, throttled, or served). */
const REACHED = (status: number) => (status >= 200 && status < 300) || [400, 401, 422, 429].includes(status);

const title = (html: string) => /<title>([^<]*)<\/title>/i.exec(html)?.[1]?.trim() ?? '';

async function probe(
  url: string,
  init: RequestInit,
  timeoutMs: number,
): Promise<{ status: number; text: string; date: string | null; ms: number; mid: number } | { error: string }> {
  const t0 = Date.now();
  try {
    const res = await fetch(url, { redirect: 'manual', ...init, signal: AbortSignal.timeout(timeoutMs) });
    const text = await res.text();
    const t1 = Date.now();
    return { status: res.status, text, date: res.headers.get('date'), ms: t1 - t0, mid: (t0 + t1) / 2 };
  } catch (e) {
    return { error: (e as Error).message };
  }
}

/** Runs every check; `ok` is true only when all pass. */
export async function publicSelfTest(o: SelfTestOptions): Promise<SelfTestReport> {
  const base = o.publicUrl.replace(/\/+$/, '');
  const timeoutMs = o.timeoutMs ?? 15_000;
  const maxSkewMs = o.maxSkewMs ?? 60_000;
  const bodyBytes = o.bodyBytes ?? 32 * 1024 * 1024;
  const bogus = `/s/selftest-${randomBytes(9).toString('base64url')}`;
  const checks: SelfTestCheck[] = [];

  const [share, ours] = await Promise.all([probe(base + bogus, {}, timeoutMs), probe(o.localPublicUrl.replace(/\/+$/, '') + bogus, {}, timeoutMs)]);
  if ('error' in share) checks.push({ id: 'share-route', ok: false, detail: `the public URL did not answer: ${share.error}` });
  else if ('error' in ours) checks.push({ id: 'share-route', ok: false, detail: `our public listener did not answer: ${ours.error}` });
  else {
    const same = share.status === 404 && ours.status === 404 && title(share.text) === title(ours.text);
    checks.push({
      id: 'share-route',
      ok: same,
      detail: same
        ? 'an unknown share link shows our "link not found" page'
        : `an unknown share link answered ${share.status} "${title(share.text)}", expected our 404 page`,
    });
  }

  for (const [id, path, init] of [
    ['admin-refused', '/api/admin/storages', {}],
    [
      'login-refused',
      '/api/auth/login',
      { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'selftest@invalid', password: 'x' }) },
    ],
  ] as const) {
    const r = await probe(base + path, init, timeoutMs);
    if ('error' in r) checks.push({ id, ok: false, detail: `no answer: ${r.error}` });
    else
      checks.push({
        id,
        ok: !REACHED(r.status),
        detail: REACHED(r.status)
          ? `${path} is reachable from the public URL (${r.status}): point the tunnel at the public listener, not the main port`
          : `${path} is refused (${r.status})`,
      });
  }

  if ('error' in share || !share.date) checks.push({ id: 'clock-skew', ok: false, detail: 'no Date header to compare' });
  else {
    // Date has 1 s resolution: allow that on top of the bound.
    const skew = Date.parse(share.date) - share.mid;
    const ok = Math.abs(skew) <= maxSkewMs + 1000;
    checks.push({
      id: 'clock-skew',
      ok,
      detail: `server clock differs by ${Math.round(skew / 1000)} s${ok ? '' : ': fix the clock, expiry and signed links depend on it'}`,
    });
  }

  const body = await probe(
    base + bogus,
    { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: new Uint8Array(bodyBytes) },
    timeoutMs * 4,
  );
  const mib = (bodyBytes / 1048576).toFixed(0);
  if ('error' in body) checks.push({ id: 'body-limit', ok: false, detail: `a ${mib} MiB body did not get through: ${body.error}` });
  else
    checks.push({
      id: 'body-limit',
      ok: body.status !== 413,
      detail:
        body.status === 413 ? `the tunnel refuses ${mib} MiB bodies (413): lower the upload chunk size` : `a ${mib} MiB body gets through (${body.ms} ms)`,
    });

  return { url: base, ok: checks.every((c) => c.ok), checks };
}
