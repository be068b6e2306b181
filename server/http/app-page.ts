/**
 * The security headers of the web app's page (index.html, also as the SPA
 * fallback). Its policy allows no inline script: scripts come from this
 * origin, plus the document server's `api.js` when one is configured.
 * Frames: this origin (PDF previews, the Mermaid frame), the document server
 * and the diagram editor. Inline styles stay allowed: React's style props and
 * markdown tables' alignment set style attributes. Nothing may frame the app
 * (it frames itself nowhere). Public link pages keep their own stricter
 * policies (public/page.ts). See docs/ui.md, "Security headers of the app page".
 */
import type { Ctx } from './context';

/** Origins besides this one the app talks to: the configured document server and diagram editor ('' = none). */
export interface AppOrigins {
  docserver: string;
  diagram: string;
}

/** `https://host:port` of an http(s) URL; null for '' or anything else. */
function originOf(url: string): string | null {
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.origin : null;
  } catch {
    return null;
  }
}

/** The app page's Content-Security-Policy for these external origins. */
export function appPagePolicy(o: AppOrigins): string {
  const docs = originOf(o.docserver);
  const diagram = originOf(o.diagram);
  const list = (...xs: Array<string | null>) => xs.filter((x): x is string => !!x).join(' ');
  return [
    "default-src 'self'",
    // 'wasm-unsafe-eval' lets the vault compile Argon2id's WebAssembly (docs/vault.md); it allows no JavaScript eval.
    `script-src ${list("'self'", "'wasm-unsafe-eval'", docs)}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "media-src 'self' blob:",
    "font-src 'self' data:",
    `connect-src ${list("'self'", docs)}`,
    `frame-src ${list("'self'", 'blob:', docs, diagram)}`,
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** Sets the app page's headers: the policy, isolation from cross-origin windows, no sniffing, same-origin referrers. */
export function appPageHeaders(ctx: Ctx, origins: AppOrigins): void {
  ctx.set('Content-Security-Policy', appPagePolicy(origins));
  ctx.set('Cross-Origin-Opener-Policy', 'same-origin');
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('X-Frame-Options', 'DENY');
  // The app's addresses carry folder and file names: they go to this origin only (public pages send none at all).
  ctx.set('Referrer-Policy', 'same-origin');
}
