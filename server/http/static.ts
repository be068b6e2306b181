/**
 * Serves the built web UI (dist/renderer) with an SPA fallback: unknown
 * non-API GETs get index.html. Hashed assets are cached for a year; the
 * index is revalidated every time so a new build is picked up at once.
 * A file the build precompressed (scripts/precompress.mjs) goes out as its
 * `.br` or `.gz` twin to a client that accepts one, but only while the
 * original and the twin still have the sizes (and the original the mtime) the
 * build's manifest recorded: a stale or missing twin means the original.
 */
import { createReadStream, existsSync, readFileSync, statSync } from 'node:fs';
import { extname, join, normalize, sep } from 'node:path';
import { contentTypeOf } from '../lib/mime';
import type { Ctx, Mw } from './context';
import { appPageHeaders, type AppOrigins } from './app-page';

const FALLBACK_HTML = `<!doctype html><html><head><meta charset="utf-8"><title>Filedock</title></head><body><p>Filedock is running. The web UI has not been built yet: run <code>npm run build:app</code>.</p></body></html>`;

/** A manifest entry: the original's size and mtime at build, and its twins' sizes (absent: none written). */
interface Twins {
  size: number;
  mtimeMs: number;
  br?: number;
  gz?: number;
}
type Coding = 'br' | 'gzip';
const SUFFIX: Record<Coding, 'br' | 'gz'> = { br: 'br', gzip: 'gz' };

/** The build's manifest, re-read when its mtime changes; empty when missing or unreadable. */
function manifest(root: string): () => Record<string, Twins> {
  const path = join(root, 'precompressed.json');
  let seen = -1;
  let files: Record<string, Twins> = {};
  return () => {
    const m = statSync(path, { throwIfNoEntry: false })?.mtimeMs ?? 0;
    if (m !== seen) {
      seen = m;
      try {
        files = m ? (JSON.parse(readFileSync(path, 'utf8')).files ?? {}) : {};
      } catch {
        files = {};
      }
    }
    return files;
  };
}

/**
 * The coding of `offered` to send for an Accept-Encoding header: the highest
 * q above 0, ties going to the first offered (br before gzip); null for the
 * original (nothing acceptable, or identity explicitly preferred).
 */
function pickEncoding(header: string, offered: Coding[]): Coding | null {
  const q = new Map<string, number>();
  for (const part of header.toLowerCase().split(',')) {
    const [name, ...params] = part.split(';').map((s) => s.trim());
    if (!name) continue;
    const qp = params.find((p) => p.startsWith('q='));
    const v = qp ? Number(qp.slice(2)) : 1;
    q.set(name, Number.isFinite(v) ? v : 0);
  }
  let best: Coding | null = null;
  let bestQ = 0;
  for (const c of offered) {
    const v = q.get(c) ?? q.get('*') ?? 0;
    if (v > bestQ) [best, bestQ] = [c, v];
  }
  return (q.get('identity') ?? 0) > bestQ ? null : best;
}

/** The meta tag that tells the web app its base path (renderer/src/lib/base.ts reads it). */
export const BASE_META = 'filedock-base';

/**
 * The app page of a request that came through a tenant's `/t/<slug>` prefix (docs/tenants.md): the page with
 * its base path in a meta tag, so the app's routes and API calls carry the prefix. Never precompressed (the
 * twins are the page without it). `base` is the prefix the tenant middleware matched: a slug, nothing to escape.
 */
function sendWithBase(ctx: Ctx, file: string, base: string): void {
  const page = readFileSync(file, 'utf8').replace(/<head>/i, (h) => `${h}<meta name="${BASE_META}" content="${base}">`);
  // Koa answers HEAD with these headers and no body.
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = page;
}

export function serveRenderer(root: string, excluded: RegExp, origins: () => AppOrigins): Mw {
  const twinsOf = manifest(root);

  /** Sends `rel` (an existing file), precompressed when possible; HEAD gets the same headers without a body. */
  const send = (ctx: Ctx, rel: string, size: number, mtimeMs: number) => {
    const t = twinsOf()[rel.split(sep).join('/')];
    const file = join(root, rel);
    const twin = (c: Coding) => `${file}.${SUFFIX[c]}`;
    const fresh = !!t && t.size === size && t.mtimeMs === mtimeMs;
    const offered = (['br', 'gzip'] as const).filter(
      (c) => fresh && t[SUFFIX[c]] !== undefined && statSync(twin(c), { throwIfNoEntry: false })?.size === t[SUFFIX[c]],
    );
    const coding = offered.length ? pickEncoding(ctx.get('accept-encoding'), offered) : null;
    if (offered.length) ctx.vary('Accept-Encoding');
    if (coding) ctx.set('Content-Encoding', coding);
    ctx.type = contentTypeOf(rel);
    ctx.length = coding ? t![SUFFIX[coding]]! : size;
    ctx.status = 200;
    if (ctx.method === 'GET') ctx.body = createReadStream(coding ? twin(coding) : file);
  };

  return async (ctx, next) => {
    if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || excluded.test(ctx.path)) return next();
    let rel: string;
    try {
      rel = normalize(decodeURIComponent(ctx.path)).replace(/^([/\\])+/, '');
    } catch {
      return next();
    }
    const file = join(root, rel);
    const inside = file.startsWith(root + sep);
    const st = inside && rel !== '' && existsSync(file) ? statSync(file) : null;
    if (st?.isFile() && rel !== 'index.html') {
      ctx.set('Cache-Control', rel.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'no-cache');
      ctx.set('X-Content-Type-Options', 'nosniff');
      // Public build output: the sandboxed Mermaid frame (an opaque origin) loads its module scripts from here.
      if (rel.startsWith('assets/')) ctx.set('Access-Control-Allow-Origin', '*');
      return send(ctx, rel, st.size, st.mtimeMs);
    }
    if (extname(rel) && rel.startsWith('assets/')) return next();
    // The app page itself, asked for by name or as the fallback of a deep link.
    ctx.set('Cache-Control', 'no-cache');
    appPageHeaders(ctx, origins());
    const index = statSync(join(root, 'index.html'), { throwIfNoEntry: false });
    if (index && ctx.state.tenantBase) return sendWithBase(ctx, join(root, 'index.html'), ctx.state.tenantBase);
    if (index) return send(ctx, 'index.html', index.size, index.mtimeMs);
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = FALLBACK_HTML;
  };
}
