/**
 * Serves the built web UI (dist/renderer) with an SPA fallback: unknown
 * non-API GETs get index.html. Hashed assets are cached for a year; the
 * index is revalidated every time so a new build is picked up at once.
 */
import { createReadStream, existsSync, statSync } from 'node:fs';
import { extname, join, normalize, sep } from 'node:path';
import type { Mw } from './context';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml', '.png': 'image/png', '.ico': 'image/x-icon', '.json': 'application/json', '.woff2': 'font/woff2',
  '.webmanifest': 'application/manifest+json', '.map': 'application/json', '.txt': 'text/plain; charset=utf-8',
};

const FALLBACK_HTML = `<!doctype html><html><head><meta charset="utf-8"><title>Filedock</title></head><body><p>Filedock is running. The web UI has not been built yet: run <code>npm run build:app</code>.</p></body></html>`;

export function serveRenderer(root: string, excluded: RegExp): Mw {
  const index = join(root, 'index.html');
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
    if (inside && rel !== '' && existsSync(file) && statSync(file).isFile()) {
      const st = statSync(file);
      ctx.type = TYPES[extname(file)] ?? 'application/octet-stream';
      ctx.length = st.size;
      ctx.set('Cache-Control', rel.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'no-cache');
      ctx.set('X-Content-Type-Options', 'nosniff');
      // Public build output: the sandboxed Mermaid frame (an opaque origin) loads its module scripts from here.
      if (rel.startsWith('assets/')) ctx.set('Access-Control-Allow-Origin', '*');
      ctx.body = ctx.method === 'HEAD' ? null : createReadStream(file);
      return;
    }
    if (extname(rel) && rel.startsWith('assets/')) return next();
    ctx.set('Cache-Control', 'no-cache');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('X-Frame-Options', 'SAMEORIGIN');
    ctx.set('Referrer-Policy', 'same-origin');
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = existsSync(index) ? createReadStream(index) : FALLBACK_HTML;
  };
}
