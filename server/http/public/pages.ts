/**
 * The public pages: a shared folder's browse page (gallery thumbnails and
 * per-file downloads), the PIN form, the ZIP preparing page, the dead-link
 * page and the file-request upload page. Pure string building over escaped
 * values; the routes decide which one to send.
 */
import type { Lang } from '../../lib/i18n';
import { DROP_CHUNK, pt, ptn, publicDate, type DropSettings, type PublicKey } from '../../shares';
import type { Ctx } from '../context';
import { esc, sendPage } from './page';
import { DROP_SCRIPT } from './drop-script';

export interface BrowseRow {
  name: string;
  type: 'file' | 'dir';
  size: number;
  /** Site-absolute link of the row (already encoded). */
  href: string;
  thumb: string | null;
}

const enc = (rel: string): string => rel.split('/').map(encodeURIComponent).join('/');

/** `/s/<token>/f/<rel>` plus the download token when the link has a PIN. */
export function shareHref(token: string, rel: string, dt: string | undefined, extra = ''): string {
  const qs = [dt ? `dt=${encodeURIComponent(dt)}` : '', extra].filter(Boolean).join('&');
  return `/s/${encodeURIComponent(token)}${rel ? `/f/${enc(rel)}` : ''}${qs ? `?${qs}` : ''}`;
}

export function humanSize(n: number): string {
  const u = ['B', 'KB', 'MB', 'GB', 'TB'];
  let i = 0;
  let v = n;
  while (v >= 1024 && i < u.length - 1) {
    v /= 1024;
    i++;
  }
  return `${i === 0 ? v : v.toFixed(v < 10 ? 1 : 0)} ${u[i]}`;
}

export function browsePage(
  ctx: Ctx,
  o: {
    lang: Lang;
    title: string;
    rows: BrowseRow[];
    total: number;
    zipHref: string;
    upHref: string | null;
    expiresAt: string | null;
    remaining: number | null;
  },
): void {
  const { lang } = o;
  const meta = [ptn(lang, 'page.items', o.total)];
  if (o.expiresAt) meta.push(pt(lang, 'page.expires', { date: publicDate(lang, o.expiresAt) }));
  if (o.remaining !== null) meta.push(ptn(lang, 'page.downloads_left', o.remaining));
  const items = o.rows
    .map((r) =>
      r.type === 'dir'
        ? `<li><i class="t"></i><a class="d" href="${esc(r.href)}">${esc(r.name)}</a></li>`
        : `<li>${r.thumb ? `<img loading="lazy" alt="" src="${esc(r.thumb)}">` : '<i class="t"></i>'}<a class="f" href="${esc(r.href)}">${esc(r.name)}</a><s>${humanSize(r.size)}</s></li>`,
    )
    .join('');
  const body =
    `<div class="card"><h1>${esc(o.title)}</h1><p class="mut">${esc(meta.join(' · '))}</p>` +
    `<p><a class="btn" href="${esc(o.zipHref)}">${esc(pt(lang, 'page.download_all'))}</a>${o.upHref ? ` <a href="${esc(o.upHref)}">${esc(pt(lang, 'page.up'))}</a>` : ''}</p>` +
    (items ? `<ul class="l">${items}</ul>` : `<p class="mut">${esc(pt(lang, 'page.empty'))}</p>`) +
    `</div>`;
  sendPage(ctx, { lang, title: o.title, body });
}

/** The PIN form; `error` is an already translated sentence; `modules`: an encrypted link's script, which keeps the key's fragment across the form. */
export function pinPage(ctx: Ctx, o: { lang: Lang; action: string; error?: string; status?: number; modules?: string[] }): void {
  const { lang } = o;
  const body =
    `<div class="card"><h1>${esc(pt(lang, 'pin.title'))}</h1><p>${esc(pt(lang, 'pin.prompt'))}</p>` +
    (o.error ? `<p class="err" role="alert">${esc(o.error)}</p>` : '') +
    `<form method="post" action="${esc(o.action)}"><label for="pin">${esc(pt(lang, 'pin.label'))}</label>` +
    `<input id="pin" name="pin" type="password" inputmode="numeric" autocomplete="off" autofocus required maxlength="64">` +
    `<p><button class="btn" type="submit">${esc(pt(lang, 'pin.submit'))}</button></p></form></div>`;
  sendPage(ctx, { lang, title: pt(lang, 'pin.title'), body, status: o.status ?? 401, modules: o.modules });
}

/** Shown while a folder archive is built on first click; refreshes itself through `zip=wait`. */
export function preparingPage(ctx: Ctx, o: { lang: Lang; title: string; waitHref: string }): void {
  const body = `<div class="card"><h1>${esc(o.title)}</h1><p>${esc(pt(o.lang, 'page.preparing'))}</p><p><a class="btn" href="${esc(o.waitHref)}">${esc(pt(o.lang, 'page.download_all'))}</a></p></div>`;
  sendPage(ctx, { lang: o.lang, title: o.title, body, status: 202 });
}

type DeadKey = 'expired' | 'revoked' | 'used_up' | 'used_up_drop' | 'unavailable' | 'busy' | 'suspended' | 'not_found' | 'error';

const DEAD: Record<string, DeadKey> = {
  link_suspended: 'suspended',
  rate_limited: 'busy',
  expired: 'expired',
  revoked: 'revoked',
  gone: 'revoked',
  storage_unavailable: 'unavailable',
  storage_unreachable: 'unavailable',
  database_busy: 'busy',
  server_busy: 'busy',
  not_found: 'not_found',
  bad_path: 'not_found',
  name_not_allowed: 'not_found',
};

/**
 * Which dead-link sentence a refusal gets. A link its owner revoked keeps the
 * spec's state `expired` (reason `revoked`) but its page says revoked; a
 * capped link is `not_found` (reason `capped`) but its page says used up. The
 * page names the reason and nothing more (no count, no owner, no file).
 */
export function deadReason(code: string, params: Record<string, unknown> = {}, drop = false): DeadKey {
  if (code === 'expired' && params.reason === 'revoked') return 'revoked';
  if (code === 'not_found' && params.reason === 'capped') return drop ? 'used_up_drop' : 'used_up';
  return DEAD[code] ?? 'error';
}

const DEAD_STATUS: Partial<Record<DeadKey, number>> = { unavailable: 503, busy: 503, suspended: 423 };

/**
 * The styled page for a refused link. Expired, revoked, used-up and unknown
 * links answer 404 (the spec's styled 404), each with its own heading and
 * sentence; a storage that is down answers 503 so the visitor knows to come back.
 */
export function deadPage(ctx: Ctx, code: string, params: Record<string, unknown> = {}): void {
  const lang = ctx.state.lang;
  const reason = deadReason(code, params, ctx.path.startsWith('/d/'));
  const status = code === 'rate_limited' ? 429 : reason === 'error' ? ctx.status || 500 : (DEAD_STATUS[reason] ?? 404);
  const title = pt(lang, DEAD_TITLE[reason] ?? 'dead.title');
  const body = `<div class="card"><h1>${esc(title)}</h1><p data-reason="${reason}">${esc(pt(lang, `dead.${reason}`))}</p></div>`;
  sendPage(ctx, { lang, title, body, status });
}

const DEAD_TITLE: Partial<Record<DeadKey, PublicKey>> = {
  expired: 'dead.title.expired',
  revoked: 'dead.title.revoked',
  used_up: 'dead.title.used_up',
  used_up_drop: 'dead.title.used_up_drop',
};

/** The upload page of a file request. The script talks to the drop API documented in docs/public-links.md. */
export function dropPage(ctx: Ctx, o: { lang: Lang; token: string; settings: DropSettings; needsPin: boolean; pinError?: string }): void {
  const { lang, settings: s } = o;
  const strings = {
    sending: pt(lang, 'drop.sending', { pct: '{pct}' }),
    done: pt(lang, 'drop.done', { n: '{n}' }),
    failed: pt(lang, 'drop.failed', { reason: '{reason}' }),
    offline: pt(lang, 'drop.offline'),
  };
  const body =
    `<div class="card"><h1>${esc(pt(lang, 'drop.title'))}</h1><p class="mut">${esc(pt(lang, 'drop.intro'))}</p>` +
    `<p class="mut">${esc(pt(lang, 'drop.limits', { files: s.max_files, size: s.max_file_size_mb }))}${s.allowed_ext.length ? ` ${esc(pt(lang, 'drop.allowed', { ext: s.allowed_ext.join(', ') }))}` : ''}</p>` +
    `<noscript><p class="mut">${esc(pt(lang, 'drop.noscript', { size: Math.min(s.max_file_size_mb, DROP_CHUNK / 1024 / 1024) }))}</p></noscript>` +
    // Without the script the browser posts the form itself (server/http/public/drop-form.ts); the script takes it over.
    `<form id="drop" method="post" enctype="multipart/form-data" data-api="/api/public/drop/${encodeURIComponent(o.token)}" data-max="${s.max_files}" data-strings="${esc(JSON.stringify(strings))}">` +
    (o.needsPin
      ? `<label for="pin">${esc(pt(lang, 'pin.label'))}</label><input id="pin" name="pin" type="password" inputmode="numeric" autocomplete="off" required maxlength="64">`
      : '') +
    (s.ask_name ? `<label for="name">${esc(pt(lang, 'drop.name'))}</label><input id="name" name="name" maxlength="64" autocomplete="name">` : '') +
    `<label for="note">${esc(pt(lang, 'drop.note'))}</label><textarea id="note" name="note" rows="3" maxlength="10000"></textarea>` +
    `<label for="files">${esc(pt(lang, 'drop.files'))}</label><input id="files" name="files" type="file" multiple required${s.allowed_ext.length ? ` accept="${esc(s.allowed_ext.map((e) => '.' + e).join(','))}"` : ''}>` +
    `<p><button class="btn" type="submit">${esc(pt(lang, 'drop.send'))}</button></p><div class="bar"><i id="bar"></i></div><p id="msg" role="status"></p></form></div>`;
  sendPage(ctx, { lang, title: pt(lang, 'drop.title'), body, script: DROP_SCRIPT });
}

/**
 * The answer to a drop form posted without JavaScript: what was received,
 * and the refusal that stopped it, if any (with its status).
 */
export function dropResultPage(ctx: Ctx, o: { lang: Lang; token: string; received: string[]; error: { message: string; status: number } | null }): void {
  const { lang } = o;
  const list = o.received.length
    ? `<p>${esc(pt(lang, 'drop.received'))}</p><ul class="l">${o.received.map((n) => `<li class="f">${esc(n)}</li>`).join('')}</ul>`
    : '';
  const head = o.error
    ? `<p class="err">${esc(pt(lang, 'drop.failed', { reason: o.error.message }))}</p>`
    : `<p>${esc(pt(lang, 'drop.done', { n: o.received.length }))}</p>`;
  const again = `<p><a class="btn" href="/d/${encodeURIComponent(o.token)}?lang=${lang}">${esc(pt(lang, o.error ? 'drop.back' : 'drop.again'))}</a></p>`;
  const body = `<div class="card"><h1>${esc(pt(lang, 'drop.title'))}</h1>${head}${list}${again}</div>`;
  sendPage(ctx, { lang, title: pt(lang, 'drop.title'), body, status: o.error?.status ?? 200 });
}
