/**
 * What a share link's visitor reaches: `/s/{token}` (file download, folder
 * browse page and ZIP, PIN form), `/s/{token}/f/{path}` (one file of a shared
 * folder, its thumbnail, a subfolder's page), link metadata, PIN
 * verification and the download-token route. Only the link token opens
 * anything here, and only below the shared item.
 */
import Router from '@koa/router';
import { PassThrough } from 'node:stream';
import { AppError, isAppError } from '../../errors';
import { t } from '../../lib/i18n';
import { baseName, cleanRel, joinRel, parentRel } from '../../lib/paths';
import { statOrRevoked, type OpenShare, type Shares } from '../../shares';
import { thumbUrl } from '../../thumbs';
import type { AppState, Ctx, Mw } from '../context';
import { readObject } from '../middlewares/body';
import { browsePage, deadPage, pinPage, preparingPage, shareHref, type BrowseRow } from '../public/pages';
import { publicHeaders } from '../public/page';
import type { AdmitPublic } from '../public/egress';
import { sendSharedFile, sendZipFile } from '../public/send-file';
import { streamBody } from '../serve-file';
import { filePage, ogDescription, viewKind, viewPage } from '../public/share-views';
import { isUnfurler } from '../public/unfurlers';
import { vaultLinkPage } from '../public/vault-link-page';
import { vaultLinkModules } from '../public/vault-link-script';
import { linkOrigin, linkTenant } from '../context';
import { mimeOf } from '../../catalogue';
import { validate, z } from '../validate';
import { routeDoc } from '../openapi/route-doc';
import { basePath } from '../public/under-base';

const doc = routeDoc('Public links', 'public');

/** Rows on one browse page; a folder with more shows the first ones and the count. */
const PAGE_ROWS = 1000;
/** `zip=wait` gives up after this and answers 202 (the build goes on). */
const ZIP_WAIT_MS = 10 * 60_000;
const PIN_CODES = new Set(['unauthorised', 'pin_wrong', 'locked']);

/** Marks the request as the public door: `read_only` 409, `quota_exceeded` 507, styled pages for browsers. */
export const publicDoor: Mw = async (ctx, next) => {
  ctx.state.door = 'public';
  if (!ctx.path.startsWith('/api/')) ctx.state.renderPublicError = deadPage;
  await next();
};

const wantsHtml = (ctx: Ctx): boolean => (ctx.get('accept') || '').includes('text/html');
/** A chat app's or social site's preview bot: it gets pages, never bytes, so it never uses up a link. */
const unfurler = (ctx: Ctx): boolean => isUnfurler(ctx.get('user-agent'));
/** Browsers and preview bots read pages (the PIN form, the landing page, the browse page). */
const wantsPage = (ctx: Ctx): boolean => wantsHtml(ctx) || unfurler(ctx);

const verifyBody = z.object({ pin: z.string().max(64).optional() });
/** What the link routes read from the query (each optional; an unknown value is ignored): said in words, as the handlers read them one by one. */
const LINK_QUERY =
  'Query: `pin` (or header X-Service-Pin), `dt` (a download token from verify), `inline=1` (show, not download), `dl=1` (the bytes, not the page), `thumb=1` (a thumbnail), `zip=wait|status` (a folder’s archive), `lang` (`en`, `tr`). Browsers get HTML pages; other clients get the bytes.';

export function sharePublicRoutes(d: {
  shares: Shares;
  maxJsonBytes: number;
  admit?: AdmitPublic;
  log: (msg: string, err?: unknown) => void;
  /** The built web UI (dist/renderer): the decrypting script of an encrypted file's page comes from there. */
  rendererDir?: string;
}): Router<AppState> {
  const r = new Router<AppState>();
  const { service, zips } = d.shares;

  /** Opens the link of a GET and admits the visitor (uplink guard and budget: public/egress.ts). */
  const openLink = async (ctx: Ctx): Promise<OpenShare> => {
    const o = await service.open(linkTenant(ctx), ctx.params.token, 'link');
    await d.admit?.(ctx, o.share);
    return o;
  };

  const credOf = (ctx: Ctx) => ({
    pin: (typeof ctx.query.pin === 'string' ? ctx.query.pin : undefined) ?? (ctx.get('x-service-pin') || undefined),
    dt: typeof ctx.query.dt === 'string' ? ctx.query.dt : undefined,
  });

  /** The decrypting script of a link to an encrypted file (none for other links, or without a built UI). */
  const vaultModules = async (o: OpenShare): Promise<string[]> =>
    d.rendererDir && !o.share.is_dir && service.encrypted(o.share.storage_id, o.share.rel) ? vaultLinkModules(d.rendererDir) : [];

  /** The PIN gate; a browser gets the PIN form (with the reason) instead of JSON; an encrypted file's form keeps the key's fragment. */
  const gate = async (ctx: Ctx, o: OpenShare): Promise<string | undefined> => {
    const cred = credOf(ctx);
    try {
      await service.checkPin(o.share, cred);
    } catch (e) {
      if (!(isAppError(e) && PIN_CODES.has(e.code) && wantsPage(ctx))) throw e;
      const error = e.code === 'unauthorised' ? undefined : t(ctx.state.lang, e.code, e.params);
      const modules = await vaultModules(o);
      pinPage(ctx, { lang: ctx.state.lang, action: `/s/${encodeURIComponent(o.share.token)}`, error, status: e.code === 'locked' ? 429 : 401, modules });
      return 'page';
    }
    if (!o.share.pin_hash) return undefined;
    return cred.dt ?? service.downloadToken(o.share).download_token;
  };

  r.get('/api/files/share/:token', doc({ summary: 'A link’s metadata' }), publicDoor, async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    publicHeaders(ctx);
    ctx.body = await service.metadata(linkTenant(ctx), ctx.params.token);
  });

  r.post('/api/share/:token/verify', doc({ summary: 'Check a link’s PIN: a short-lived download token', body: verifyBody }), publicDoor, async (ctx) => {
    const b = validate(verifyBody, await readObject(ctx, 4096));
    const o = await service.open(linkTenant(ctx), ctx.params.token);
    publicHeaders(ctx);
    ctx.body = await service.verify(o.share, b.pin ?? ctx.get('x-service-pin'));
  });

  r.get(
    '/api/share/:token/download',
    doc({ summary: 'Download a link’s file (counts one download; refused past the cap)', description: LINK_QUERY, produces: ['application/octet-stream'] }),
    publicDoor,
    async (ctx) => {
      const o = await openLink(ctx);
      await service.checkPin(o.share, credOf(ctx));
      await sendRoot(ctx, o);
    },
  );

  r.get(
    '/s/:token',
    doc({
      summary: 'A link: a file’s page or bytes, a folder’s page or ZIP, the PIN form; an app link’s page',
      description: LINK_QUERY,
      produces: ['text/html', 'application/octet-stream', 'application/zip'],
    }),
    publicDoor,
    async (ctx) => {
      const o = await openLink(ctx);
      const zip = typeof ctx.query.zip === 'string' ? ctx.query.zip : undefined;
      if (zip === 'status') {
        await service.checkPin(o.share, credOf(ctx));
        ctx.set('Cache-Control', 'no-store');
        ctx.body = await zips.status(o.share);
        return;
      }
      // The same address answers a page or the bytes by who asks (Accept, User-Agent).
      ctx.vary('Accept');
      ctx.vary('User-Agent');
      const dt = await gate(ctx, o);
      if (dt === 'page') return;
      if (o.share.is_dir && (unfurler(ctx) || (!zip && wantsHtml(ctx)))) return await browse(ctx, o, '', dt);
      if (!o.share.is_dir && ctx.query.thumb === '1') return sendThumb(ctx, await thumbNode(o, o.share.rel));
      // A browser lands on the file's page and downloads from its button (`dl=1`), so a preview never spends a
      // capped link; a preview bot gets the page whatever it asks for; other clients (curl, wget) get the bytes.
      if (!o.share.is_dir && (unfurler(ctx) || (wantsHtml(ctx) && ctx.query.dl !== '1' && ctx.query.inline !== '1'))) return landing(ctx, o, '', dt);
      await sendRoot(ctx, o, dt);
    },
  );

  r.post(
    '/s/:token',
    doc({
      summary: 'The PIN form of a link page (303 to the link with a download token)',
      consumes: 'application/x-www-form-urlencoded',
      status: 303,
      produces: [],
    }),
    publicDoor,
    async (ctx) => {
      const o = await service.open(linkTenant(ctx), ctx.params.token, 'link');
      const pin = await readPinForm(ctx);
      const action = `/s/${encodeURIComponent(o.share.token)}`;
      try {
        const { download_token } = await service.verify(o.share, pin);
        publicHeaders(ctx);
        ctx.status = 303;
        ctx.redirect(basePath(ctx.state.tenantBase, `${action}?dt=${encodeURIComponent(download_token)}`));
      } catch (e) {
        if (!(isAppError(e) && PIN_CODES.has(e.code))) throw e;
        const modules = await vaultModules(o);
        pinPage(ctx, { lang: ctx.state.lang, action, error: t(ctx.state.lang, e.code, e.params), status: e.code === 'locked' ? 429 : 401, modules });
      }
    },
  );

  r.get(
    '/s/:token/f/*path',
    doc({
      summary: 'One file, thumbnail or subfolder page inside a shared folder',
      description: LINK_QUERY + ' `view=1` shows a viewer page.',
      produces: ['text/html', 'application/octet-stream'],
    }),
    publicDoor,
    async (ctx) => {
      const o = await openLink(ctx);
      if (!o.share.is_dir) throw new AppError('not_found');
      const sub = cleanRel(ctx.params.path);
      const dt = await gate(ctx, o);
      if (dt === 'page') return;
      const rel = joinRel(o.share.rel, sub);
      if (ctx.query.thumb === '1') return sendThumb(ctx, await thumbNode(o, rel));
      const place = { storage_id: o.share.storage_id, rel };
      const entry = await o.files.stat(place).catch(statOrRevokedChild);
      if (entry.type === 'dir') return await browse(ctx, o, sub, dt);
      ctx.vary('User-Agent');
      if (unfurler(ctx)) return landing(ctx, o, sub, dt);
      const file = await o.files.open(place).catch(statOrRevokedChild);
      const kind = viewKind(file.name, file.mime);
      if (ctx.query.view === '1' && kind && wantsHtml(ctx)) {
        return viewPage(ctx, service, {
          lang: ctx.state.lang,
          share: o.share,
          file,
          kind,
          inline: shareHref(o.share.token, sub, dt, 'inline=1'),
          links: { download: shareHref(o.share.token, sub, dt), back: shareHref(o.share.token, parentRel(sub), dt), ...(await neighbours(o, sub, dt)) },
        });
      }
      await sendSharedFile(ctx, service, o.share, file, ctx.query.inline === '1');
    },
  );

  /** The shared item itself: a file, or a folder's ZIP (cached, built with `zip=wait`, or streamed while it builds). */
  async function sendRoot(ctx: Ctx, o: OpenShare, dt?: string): Promise<void> {
    if (!o.share.is_dir) return sendSharedFile(ctx, service, o.share, await sharedFile(o), ctx.query.inline === '1');
    const name = `${baseName(o.share.rel) || o.storage.name}.zip`;
    let cached = await zips.ready(o.share);
    if (!cached && ctx.query.zip === 'wait') {
      const build = (await zips.build(o.share)).promise;
      const waited = await Promise.race([build.then(() => true), new Promise<boolean>((res) => setTimeout(() => res(false), ZIP_WAIT_MS).unref())]);
      if (!waited) {
        if (wantsHtml(ctx)) return preparingPage(ctx, { lang: ctx.state.lang, title: name, waitHref: shareHref(o.share.token, '', dt, 'zip=wait') });
        ctx.status = 202;
        ctx.body = await zips.status(o.share);
        return;
      }
      cached = await zips.ready(o.share);
    }
    if (cached) return sendZipFile(ctx, service, o.share, cached.file, cached.size, name);
    const slot = await service.claimDownload(o.share);
    const out = new PassThrough({ highWaterMark: 1 << 20 });
    const { attached } = await zips.build(o.share, out);
    if (!attached) {
      const abort = new AbortController();
      ctx.res.once('close', () => abort.abort());
      zips.stream(o.share, o.owner, out, abort.signal).catch((e) => out.destroy(e));
    }
    ctx.status = 200;
    ctx.type = 'application/zip';
    publicHeaders(ctx);
    ctx.set('Content-Disposition', `attachment; filename="${name.replace(/[^\x20-\x7e]|["\\]/g, '_')}"; filename*=UTF-8''${encodeURIComponent(name)}`);
    ctx.set('Cache-Control', 'private, no-store');
    // The archive's size is not known while it builds: any byte sent spends the slot, none gives it back.
    await streamBody(ctx, out, (bytes) => slot.settle(bytes, 1));
  }

  async function browse(ctx: Ctx, o: OpenShare, sub: string, dt: string | undefined): Promise<void> {
    const dir = sub ? joinRel(o.share.rel, sub) : o.share.rel;
    const { rows, total } = await d.shares.browse(o.share, dir, PAGE_ROWS);
    const token = o.share.token;
    const list: BrowseRow[] = rows.map((n) => {
      const childRel = joinRel(sub, n.name);
      return {
        name: n.name,
        type: n.type,
        size: n.size,
        href: shareHref(token, childRel, dt, n.type === 'file' && viewKind(n.name, n.mime) ? 'view=1' : ''),
        thumb: n.type === 'file' && n.thumb_state === 'ready' ? shareHref(token, childRel, dt, 'thumb=1') : null,
      };
    });
    browsePage(ctx, {
      lang: ctx.state.lang,
      title: sub ? baseName(sub) : baseName(o.share.rel) || o.storage.name,
      rows: list,
      total,
      zipHref: shareHref(token, '', dt, 'zip=1'),
      upHref: sub ? shareHref(token, parentRel(sub), dt) : null,
      expiresAt: o.share.expires_at,
      remaining: o.share.max_downloads === null ? null : o.share.max_downloads - o.share.downloads,
    });
  }

  /**
   * The landing page of the shared file (`sub` '') or of a file in a shared folder: counts nothing. Links
   * without a PIN carry the OpenGraph card (its image is the thumbnail route, which counts nothing either);
   * a PIN link tells a preview nothing beyond the PIN form.
   */
  async function landing(ctx: Ctx, o: OpenShare, sub: string, dt: string | undefined): Promise<void> {
    const rel = sub ? joinRel(o.share.rel, sub) : o.share.rel;
    const f = sub ? await o.files.stat({ storage_id: o.share.storage_id, rel }).catch(statOrRevokedChild) : await sharedFile(o);
    const size = f.size;
    if (d.shares.service.encrypted(o.share.storage_id, rel)) {
      const url = linkOrigin(ctx) + shareHref(o.share.token, sub, undefined);
      const modules = d.rendererDir ? await vaultLinkModules(d.rendererDir) : [];
      return vaultLinkPage(ctx, { lang: ctx.state.lang, size, download: shareHref(o.share.token, sub, dt, 'dl=1'), url, pinned: !!o.share.pin_hash, modules });
    }
    const mime = f.mime || mimeOf(f.name);
    const token = o.share.token;
    const thumb = (await thumbNode(o, rel)) ? shareHref(token, sub, dt, 'thumb=1') : null;
    const self = linkOrigin(ctx);
    const og = o.share.pin_hash
      ? undefined
      : { title: f.name, description: ogDescription(ctx.state.lang, size, mime), url: self + shareHref(token, sub, undefined), image: thumb && self + thumb };
    filePage(ctx, { lang: ctx.state.lang, share: o.share, name: f.name, size, mime, thumb, download: shareHref(token, sub, dt, sub ? '' : 'dl=1'), og });
  }

  /** The shared file itself; gone (or a folder now) makes the link read as revoked. */
  function sharedFile(o: OpenShare) {
    return o.files.open({ storage_id: o.share.storage_id, rel: o.share.rel }).catch(statOrRevoked);
  }

  /** The previous and next images of a gallery image (the folder's browse order). */
  async function neighbours(o: OpenShare, sub: string, dt: string | undefined): Promise<{ prev: string | null; next: string | null }> {
    if (viewKind(baseName(sub)) !== 'image') return { prev: null, next: null };
    const parent = parentRel(sub);
    const { rows } = await d.shares.browse(o.share, parent ? joinRel(o.share.rel, parent) : o.share.rel, PAGE_ROWS);
    const images = rows.filter((n) => n.type === 'file' && viewKind(n.name, n.mime) === 'image').map((n) => n.name);
    const i = images.indexOf(baseName(sub));
    const href = (name: string | undefined) => (name === undefined ? null : shareHref(o.share.token, joinRel(parent, name), dt, 'view=1'));
    return i < 0 ? { prev: null, next: null } : { prev: href(images[i - 1]), next: href(images[i + 1]) };
  }

  function sendThumb(ctx: Ctx, node: number | null): void {
    if (!node) throw new AppError('not_found');
    publicHeaders(ctx);
    ctx.set('Cache-Control', 'private, max-age=3600');
    ctx.redirect(thumbUrl(node));
  }

  async function thumbNode(o: OpenShare, rel: string): Promise<number | null> {
    const n = await d.shares.node(o.share, rel);
    return n && n.type === 'file' && n.thumb_state === 'ready' ? n.id : null;
  }

  return r;
}

/** Below the shared folder a missing path is just `not_found`; the link itself stays good. */
function statOrRevokedChild(e: unknown): never {
  if (isAppError(e) && e.code === 'not_found') throw new AppError('not_found');
  return statOrRevoked(e);
}

/** The PIN of the HTML form (`application/x-www-form-urlencoded`, at most 1 KiB). */
async function readPinForm(ctx: Ctx): Promise<string> {
  if (ctx.is('application/json')) return String((await readObject(ctx, 1024)).pin ?? '');
  if (!ctx.is('application/x-www-form-urlencoded')) throw new AppError('bad_body');
  let raw = '';
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    raw += chunk.toString('utf8');
    if (raw.length > 1024) throw new AppError('payload_too_large', { max: 1024 });
  }
  return new URLSearchParams(raw).get('pin') ?? '';
}
