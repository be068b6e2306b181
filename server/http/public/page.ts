/**
 * The frame of every public page: tiny HTML with inline CSS (and, on the drop
 * page, inline JS) allowed by a per-response nonce under a strict CSP, every
 * value escaped, no referrer (tokens sit in URLs), no framing, no sniffing.
 * Pages are gzip-compressed when the client accepts it.
 */
import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import type { Lang } from '../../lib/i18n';
import { COLOUR } from '../../auth';
import type { Ctx } from '../context';
import { underBase } from './under-base';

/** Escapes text for HTML element content and quoted attribute values. */
export function esc(v: unknown): string {
  return String(v ?? '').replace(/[&<>"'`]/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Security headers for anything a link serves (pages and files alike). */
export function publicHeaders(ctx: Ctx): void {
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('Cross-Origin-Resource-Policy', 'same-origin');
  ctx.set('X-Robots-Tag', 'noindex, nofollow');
}

/** Row icons are drawn with borders: emoji glyphs show as empty boxes where no emoji font is installed. */
const CSS = `
:root{color-scheme:light dark;--fg:#1d2430;--mut:#667085;--bg:#f6f7f9;--card:#fff;--ac:#2457d6;--bd:#e3e6eb}
@media(prefers-color-scheme:dark){:root{--fg:#e6e9ef;--mut:#9aa3b2;--bg:#14171c;--card:#1d2128;--ac:#7aa2ff;--bd:#2c323c}}
*{box-sizing:border-box}body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
main{max-width:960px;margin:0 auto;padding:24px 16px}h1{font-size:20px;margin:0 0 4px;word-break:break-word}p{margin:6px 0}
.card{background:var(--card);border:1px solid var(--bd);border-radius:10px;padding:20px}.mut{color:var(--mut);font-size:13px}
a{color:var(--ac);text-decoration:none}a:hover{text-decoration:underline}
.btn{display:inline-block;background:var(--ac);color:#fff;border:0;border-radius:8px;padding:9px 16px;font:inherit;cursor:pointer}.btn:hover{text-decoration:none;opacity:.92}
input,textarea{font:inherit;padding:8px;border:1px solid var(--bd);border-radius:8px;width:100%;background:var(--card);color:var(--fg)}label{display:block;margin:12px 0 4px}
ul.l{list-style:none;padding:0;margin:16px 0 0}ul.l li{display:flex;gap:10px;align-items:center;padding:7px 4px;border-top:1px solid var(--bd)}
ul.l li a{flex:1;word-break:break-all}ul.l s{text-decoration:none;color:var(--mut);font-size:13px;white-space:nowrap}
ul.l img,ul.l .t{width:48px;height:48px;flex:none;object-fit:cover;border-radius:6px}
.nav{display:flex;flex-wrap:wrap;gap:14px;align-items:center}.nav .btn{margin-left:auto}
img.full{max-width:100%;max-height:75vh;display:block;margin:12px auto;border-radius:6px}iframe.pdf{width:100%;height:75vh;border:1px solid var(--bd);border-radius:6px}img.pv{max-width:320px;max-height:240px;object-fit:contain;border-radius:6px}
pre.tx{white-space:pre-wrap;word-break:break-word;background:var(--bg);border:1px solid var(--bd);border-radius:8px;padding:12px;font:13px/1.5 ui-monospace,monospace;max-height:75vh;overflow:auto}
article.md{border-top:1px solid var(--bd);margin-top:12px;overflow-wrap:anywhere}article.md pre{overflow:auto;background:var(--bg);padding:10px;border-radius:8px}
.d::before,.f::before{content:"";display:inline-block;box-sizing:border-box;margin-right:8px;vertical-align:-2px;border:1.5px solid currentColor;opacity:.75}
.d::before{width:16px;height:12px;border-radius:1px 4px 2px 2px;border-top-width:3px}.f::before{width:12px;height:15px;border-radius:1px 4px 1px 1px}
.err{color:#c0392b}.bar{height:6px;background:var(--bd);border-radius:3px;overflow:hidden;margin-top:10px}.bar i{display:block;height:100%;width:0;background:var(--ac)}
`;

export interface PageOptions {
  lang: Lang;
  title: string;
  body: string;
  /** Inline script, run under the page's nonce. */
  script?: string;
  /** Same-origin module scripts (the web UI's built assets), run under the page's nonce too. */
  modules?: string[];
  /** The page shows what its script decrypted: images and frames from `blob:` URLs. */
  blobs?: boolean;
  status?: number;
  /** OpenGraph card for link previews (absolute URLs). */
  og?: OpenGraph;
}

export interface OpenGraph {
  title: string;
  description: string;
  url: string;
  image?: string | null;
}

/** OpenGraph and Twitter card tags: what chat apps draw when the link is pasted. */
function ogTags(og: OpenGraph): string {
  const tags: Array<[string, string, string]> = [
    ['property', 'og:type', 'website'],
    ['property', 'og:title', og.title],
    ['property', 'og:description', og.description],
    ['property', 'og:url', og.url],
    ['name', 'twitter:card', og.image ? 'summary_large_image' : 'summary'],
    ['name', 'twitter:title', og.title],
    ['name', 'twitter:description', og.description],
  ];
  if (og.image) tags.push(['property', 'og:image', og.image], ['name', 'twitter:image', og.image]);
  return tags.map(([attr, key, value]) => `<meta ${attr}="${key}" content="${esc(value)}">`).join('');
}

const BRAND_CSS =
  '.brand{display:flex;gap:10px;align-items:center;margin:0 0 16px;font-weight:600;font-size:17px}.brand img{max-height:40px;max-width:160px;object-fit:contain}';

/**
 * The tenant's branding (docs/tenants.md, "Step 4"): its name and logo above the page, its colour as the
 * accent. Nothing set: nothing added, the page as it always was. The colour is checked again here, since
 * it is written into CSS, where escaping HTML would not help.
 */
function brandParts(ctx: Ctx): { css: string; header: string } {
  const b = ctx.state.branding;
  if (!b) return { css: '', header: '' };
  const css = `${BRAND_CSS}${b.colour && COLOUR.test(b.colour) ? `:root{--ac:${b.colour}}` : ''}`;
  const logo = b.logo ? `<img src="/api/public/branding/logo?v=${esc(b.logo)}" alt="">` : '';
  const header = logo || b.name ? `<header class="brand">${logo}${b.name ? `<span>${esc(b.name)}</span>` : ''}</header>` : '';
  return { css, header };
}

/**
 * Sends a page. `connect-src 'self'` is the only network the drop page's and the encrypted link page's
 * scripts need; the latter's module imports its chunks under the same nonce.
 */
export function sendPage(ctx: Ctx, o: PageOptions): void {
  const nonce = randomBytes(16).toString('base64');
  const brand = brandParts(ctx);
  // The brand header's logo address is root-relative like the page's own links: `underBase` keeps it under the prefix.
  const html = underBase(
    `<!doctype html><html lang="${o.lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
      `<meta name="robots" content="noindex,nofollow">${o.og ? ogTags(o.og) : ''}<title>${esc(o.title)}</title><style nonce="${nonce}">${CSS}${brand.css}</style></head>` +
      `<body><main>${brand.header}${o.body}</main>${o.script ? `<script nonce="${nonce}">${o.script}</script>` : ''}` +
      `${(o.modules ?? []).map((src) => `<script type="module" nonce="${nonce}" src="${esc(src)}"></script>`).join('')}</body></html>`,
    ctx.state.tenantBase,
  );
  publicHeaders(ctx);
  ctx.set(
    'Content-Security-Policy',
    `default-src 'none'; style-src 'nonce-${nonce}'; script-src 'nonce-${nonce}'; img-src 'self'${o.blobs ? ' blob:' : ''}; ${o.blobs ? "frame-src 'self' blob:; worker-src 'self'; " : ''}` +
      `connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`,
  );
  ctx.set('Cache-Control', 'no-store');
  // Added to, not replaced: a link's address answers a page or the bytes by Accept and User-Agent.
  ctx.vary('Accept-Encoding');
  ctx.vary('Accept-Language');
  ctx.status = o.status ?? 200;
  ctx.type = 'text/html; charset=utf-8';
  const raw = Buffer.from(html, 'utf8');
  if (raw.length > 1024 && ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
    ctx.set('Content-Encoding', 'gzip');
    ctx.body = gzipSync(raw, { level: 6 });
  } else ctx.body = raw;
}
