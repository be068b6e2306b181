/**
 * The pages a share visitor reads a file on instead of downloading it at once:
 * the file link's landing page (name, size, type, the thumbnail as a passive
 * preview, a Download button, OpenGraph tags for chat previews), and the view page of a file in a shared
 * folder (an image gallery with previous/next, a text or Markdown preview).
 *
 * Download counting (spec "Download counting"; docs/public-links.md): the
 * pages themselves and thumbnails never count. Showing a folder file's full
 * image or its text is serving that file, so it counts once, like its
 * download from the browse page: the image when the browser fetches it
 * (`inline=1`), the text when the server reads it for the page.
 */
import { extname } from 'node:path';
import { mimeOf } from '../../catalogue';
import type { Lang } from '../../lib/i18n';
import { isMarkdownName, renderMarkdown } from '../../lib/markdown';
import type { OpenFile } from '../../files';
import { pt, ptn, publicDate, type SharesService, type ShareRow } from '../../shares';
import type { Ctx } from '../context';
import { esc, sendPage, type OpenGraph } from './page';
import { humanSize } from './pages';

/** Text previews read at most this much of a file. */
const TEXT_MAX = 1024 * 1024;
const IMAGE = /^image\/(png|jpeg|gif|webp|bmp|avif)$/;
const TEXT_EXT = new Set([
  '.txt',
  '.md',
  '.markdown',
  '.csv',
  '.log',
  '.json',
  '.yml',
  '.yaml',
  '.ini',
  '.conf',
  '.xml',
  '.html',
  '.css',
  '.js',
  '.ts',
  '.py',
  '.sh',
]);

export type ViewKind = 'image' | 'markdown' | 'text';

/** How a shared folder's file is shown on its view page; null when it is only downloaded. */
export function viewKind(name: string, mime?: string | null): ViewKind | null {
  const m = mime || mimeOf(name);
  if (IMAGE.test(m)) return 'image';
  if (isMarkdownName(name)) return 'markdown';
  if (m.startsWith('text/') || TEXT_EXT.has(extname(name).toLowerCase())) return 'text';
  return null;
}

interface Links {
  download: string;
  back?: string | null;
  prev?: string | null;
  next?: string | null;
}

const facts = (lang: Lang, size: number, mime: string, share: ShareRow) => {
  const out = [`${pt(lang, 'file.size')}: ${humanSize(size)}`, `${pt(lang, 'file.type')}: ${mime}`];
  if (share.expires_at) out.push(pt(lang, 'page.expires', { date: publicDate(lang, share.expires_at) }));
  if (share.max_downloads !== null) out.push(ptn(lang, 'page.downloads_left', share.max_downloads - share.downloads));
  return `<p class="mut">${out.map(esc).join(' · ')}</p>`;
};

const buttons = (lang: Lang, l: Links) =>
  `<p class="nav">${l.back ? `<a href="${esc(l.back)}">${esc(pt(lang, 'page.back'))}</a>` : ''}` +
  `${l.prev ? `<a href="${esc(l.prev)}" rel="prev">← ${esc(pt(lang, 'page.prev'))}</a>` : ''}` +
  `${l.next ? `<a href="${esc(l.next)}" rel="next">${esc(pt(lang, 'page.next'))} →</a>` : ''}` +
  `<a class="btn" href="${esc(l.download)}" download>${esc(pt(lang, 'page.download'))}</a></p>`;

/**
 * The landing page of a file link (browsers and link-preview bots; after the
 * PIN when the link has one): name, size, type, the thumbnail when one is
 * ready, a Download button; `og` adds the card tags (links without a PIN
 * only). Counts nothing: the count happens on the download itself.
 */
export function filePage(
  ctx: Ctx,
  o: { lang: Lang; share: ShareRow; name: string; size: number; mime: string; thumb: string | null; download: string; og?: OpenGraph },
): void {
  const body =
    `<div class="card"><h1>${esc(o.name)}</h1>${facts(o.lang, o.size, o.mime, o.share)}` +
    (o.thumb ? `<p><img class="pv" alt="${esc(o.name)}" src="${esc(o.thumb)}"></p>` : '') +
    buttons(o.lang, { download: o.download }) +
    `</div>`;
  sendPage(ctx, { lang: o.lang, title: o.name, body, og: o.og });
}

/** The card's description: size and type, the words a chat preview shows under the name. */
export const ogDescription = (lang: Lang, size: number, mime: string): string => `${pt(lang, 'page.title.file')} · ${humanSize(size)} · ${mime}`;

/**
 * The view page of a shared folder's file. An image points at its inline
 * address (counted when fetched); text is read here, so its slot is claimed
 * first and given back when the read fails.
 */
export async function viewPage(
  ctx: Ctx,
  shares: SharesService,
  o: { lang: Lang; share: ShareRow; file: OpenFile; kind: ViewKind; inline: string; links: Links },
): Promise<void> {
  const f = o.file;
  const mime = f.mime || mimeOf(f.name);
  let content: string;
  if (o.kind === 'image') content = `<p><img class="full" alt="${esc(f.name)}" src="${esc(o.inline)}"></p>`;
  else {
    const slot = await shares.claimDownload(o.share);
    let text: string;
    try {
      text = await readHead(f);
    } catch (e) {
      await slot.settle(0, f.size);
      throw e;
    }
    void slot.settle(Buffer.byteLength(text), f.size);
    const cut = f.size > TEXT_MAX ? `<p class="mut">${esc(pt(o.lang, 'page.preview_cut'))}</p>` : '';
    content = cut + (o.kind === 'markdown' ? `<article class="md">${await renderMarkdown(text)}</article>` : `<pre class="tx">${esc(text)}</pre>`);
  }
  const body = `<div class="card"><h1>${esc(f.name)}</h1>${facts(o.lang, f.size, mime, o.share)}${buttons(o.lang, o.links)}${content}</div>`;
  sendPage(ctx, { lang: o.lang, title: f.name, body });
}

/** The first MiB of a file as UTF-8 text. */
async function readHead(f: OpenFile): Promise<string> {
  if (f.size === 0) return '';
  const chunks: Buffer[] = [];
  for await (const c of await f.read({ start: 0, end: Math.min(f.size, TEXT_MAX) - 1 })) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
