/**
 * The public page of a link to an encrypted file (docs/vault.md, "Links"). The stored name is ciphertext and
 * the key is in the URL's fragment, which never reaches the server: the page shows no name, only "Encrypted
 * file" and the ciphertext's size, and carries what the decrypting script needs in `#vault-link`
 * (`data-download`: the link's own download URL, where PIN, caps and expiry apply; `data-size`: the
 * ciphertext's length). Chat-app previewers get the same generic card (no name, no thumbnail).
 * The script (vault-link-script.ts) loads under the page's nonce and shows what it decrypted from `blob:`
 * URLs; without a built web UI the page says it cannot decrypt now.
 */
import type { Lang } from '../../lib/i18n';
import { pt } from '../../shares';
import type { Ctx } from '../context';
import { esc, sendPage } from './page';
import { humanSize } from './pages';
import { vaultLinkStrings } from './vault-link-script';

export function vaultLinkPage(ctx: Ctx, o: { lang: Lang; size: number; download: string; url: string; pinned: boolean; modules: string[] }): void {
  const title = pt(o.lang, 'page.encrypted');
  const body =
    `<div class="card"><h1>${esc(title)}</h1><p class="mut">${esc(humanSize(o.size))}</p>` +
    `<p>${esc(pt(o.lang, 'page.encrypted.about'))}</p>` +
    `<div id="vault-link" data-download="${esc(o.download)}" data-size="${o.size}" ${vaultLinkStrings(o.lang)}></div>` +
    (o.modules.length ? '' : `<p class="err">${esc(pt(o.lang, 'app.page_unavailable'))}</p>`) +
    `<noscript><p>${esc(pt(o.lang, 'page.encrypted.noscript'))}</p></noscript></div>`;
  const og = o.pinned ? undefined : { title, description: title, url: o.url };
  sendPage(ctx, { lang: o.lang, title, body, og, modules: o.modules, blobs: true });
}
