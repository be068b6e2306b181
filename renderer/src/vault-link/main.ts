/**
 * The script of the public page of a link to an encrypted file
 * (server/http/public/vault-link-page.ts; docs/vault.md, "Links"). The key
 * and the true name come from the URL fragment, which the server never sees.
 * A key of the wrong shape stops the page before anything is fetched;
 * otherwise it fetches the ciphertext through the link's own download URL (so
 * PIN, caps, expiry and rate limits apply), decrypts it here, and offers Save
 * and a preview. Nothing is shown unless every chunk verified: a wrong key or
 * changed bytes end in the integrity sentence and the bytes are dropped.
 * A file the page cannot preview is not fetched on opening: its Save button
 * hands the key to the vault's stream worker (vault/vault-stream.ts), which
 * fetches the download URL once and decrypts it into the browser's download
 * as it arrives; a failed check fails that download. Without the worker
 * (not a secure context) such a file is decrypted here first, as previews are.
 * On the PIN form of such a link it only keeps the fragment across the form's
 * round trip. Strings come already translated in `data-strings`; every text
 * goes in with textContent.
 */
import { decryptStream, parseLinkFragment, VaultError } from '../vault/crypto';
import { splitLinkHash } from '../vault/link-fragment';
import { canStream, StreamUnavailable, streamDownload } from '../vault/vault-stream';
import { previewKind, previewType } from './kinds';

type Key = 'missing' | 'incomplete' | 'integrity' | 'failed' | 'decrypting' | 'save' | 'size' | 'untitled' | 'in_browser' | 'insecure';
type Strings = Record<Key, string>;

/** Text previews show at most this much, like the plain link pages. */
const TEXT_MAX = 1024 * 1024;

const el = <K extends keyof HTMLElementTagNameMap>(tag: K, props: Partial<HTMLElementTagNameMap[K]> = {}, ...kids: Node[]) => {
  const e = Object.assign(document.createElement(tag), props);
  e.append(...kids);
  return e;
};

function humanSize(n: number): string {
  const u = ['B', 'KB', 'MB', 'GB', 'TB'];
  let i = 0;
  let v = n;
  while (v >= 1024 && i < u.length - 1) {
    v /= 1024;
    i++;
  }
  return `${i === 0 ? v : v.toFixed(v < 10 ? 1 : 0)} ${u[i]}`;
}

/** Counts the ciphertext bytes that went by, for the progress bar. */
const counter = (tick: (n: number) => void) =>
  new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, ctl) {
      tick(chunk.byteLength);
      ctl.enqueue(chunk);
    },
  });

/** The server's sentence for a refused download (JSON asked for), else the status. */
async function refusal(res: Response): Promise<string> {
  const body = (await res.json().catch(() => null)) as { message?: string } | null;
  return body?.message || `HTTP ${res.status}`;
}

async function open(root: HTMLElement, T: Strings): Promise<void> {
  const title = el('h2', { id: 'vault-link-name' });
  const facts = el('p', { className: 'mut', id: 'vault-link-facts' });
  const bar = el('i');
  const msg = el('p', { id: 'vault-link-msg', role: 'status' });
  const content = el('div', { id: 'vault-link-content' });
  root.replaceChildren(title, facts, el('div', { className: 'bar' }, bar), msg, content);
  const fail = (text: string) => {
    bar.parentElement?.remove();
    msg.className = 'err';
    msg.setAttribute('role', 'alert');
    msg.dataset.error = 'true';
    msg.textContent = text;
  };

  const { key, name: trueName } = splitLinkHash(location.hash);
  if (!key) return fail(T.missing);
  let contentKey: Uint8Array;
  try {
    contentKey = parseLinkFragment(key);
  } catch (e) {
    if (e instanceof VaultError) return fail(T.incomplete);
    throw e;
  }
  const name = trueName || T.untitled;
  title.textContent = name;
  document.title = name;
  // WebCrypto exists only in secure contexts: https, or this computer.
  if (!globalThis.crypto?.subtle) return fail(T.insecure);

  const total = Number(root.dataset.size);
  if (!previewKind(name) && canStream()) return offerStream(root.dataset.download!, total, contentKey, trueName || 'file', { msg, content, fail, T });
  let got = 0;
  const show = () => {
    const pct = total > 0 ? Math.min(100, Math.floor((got * 100) / total)) : 0;
    bar.style.width = `${pct}%`;
    msg.textContent = T.decrypting.replace('{pct}', String(pct));
  };
  show();
  let res: Response;
  try {
    // JSON for a refusal (its sentence in the visitor's language), the bytes otherwise.
    res = await fetch(root.dataset.download!, {
      credentials: 'omit',
      referrerPolicy: 'no-referrer',
      cache: 'no-store',
      headers: { accept: 'application/octet-stream, application/json;q=0.9' },
    });
  } catch (e) {
    return fail(T.failed.replace('{reason}', String((e as Error).message)));
  }
  if (!res.ok || !res.body) return fail(T.failed.replace('{reason}', await refusal(res)));

  // Held until the last chunk verified: nothing of a file that fails is ever shown. Each piece goes
  // into a Blob at once (Chromium keeps large blobs on disk), so memory stays at a few chunks.
  const parts: Blob[] = [];
  try {
    const plain = res.body
      .pipeThrough(
        counter((n) => {
          got += n;
          show();
        }),
      )
      .pipeThrough(decryptStream({ contentKey }, total));
    const reader = plain.getReader();
    for (let r = await reader.read(); !r.done; r = await reader.read()) parts.push(new Blob([r.value as Uint8Array<ArrayBuffer>]));
  } catch (e) {
    parts.length = 0;
    return fail(e instanceof VaultError ? T.integrity : T.failed.replace('{reason}', String((e as Error).message)));
  }

  const blob = new Blob(parts, { type: previewType(name) });
  const url = URL.createObjectURL(blob);
  bar.parentElement?.remove();
  msg.textContent = T.in_browser;
  facts.textContent = `${T.size}: ${humanSize(blob.size)}`;
  facts.dataset.bytes = String(blob.size);
  const save = el('a', { className: 'btn', href: url, download: trueName || 'file', textContent: T.save });
  save.id = 'vault-link-save';
  content.append(el('p', { className: 'nav' }, save));
  await preview(content, name, blob, url);
}

/**
 * Save for a file without a preview: one fetch of the download URL, by the stream worker, when clicked
 * (so a capped link counts this visit's one download then, and only once: the button goes away).
 */
function offerStream(
  download: string,
  total: number,
  contentKey: Uint8Array,
  name: string,
  ui: { msg: HTMLElement; content: HTMLElement; fail: (text: string) => void; T: Strings },
): void {
  const { msg, content, fail, T } = ui;
  document.querySelector('#vault-link .bar')?.remove();
  msg.textContent = '';
  const save = el('button', { className: 'btn', type: 'button', textContent: T.save });
  save.id = 'vault-link-save';
  content.append(el('p', { className: 'nav' }, save));
  content.dataset.preview = 'none';
  save.addEventListener('click', () => {
    save.remove();
    msg.textContent = T.decrypting.replace(/\s*%?\{pct\}%?/, '');
    const source = {
      url: download,
      headers: {},
      credentials: 'omit' as const,
      cipherTotal: total,
      contentKey: contentKey.slice().buffer,
      name,
      type: 'application/octet-stream',
    };
    streamDownload(source).then(
      () => (msg.textContent = T.in_browser),
      (e) => {
        if (e instanceof StreamUnavailable) return location.reload();
        fail(e instanceof VaultError ? T.integrity : T.failed.replace('{reason}', String((e as Error).message)));
      },
    );
  });
}

async function preview(into: HTMLElement, name: string, blob: Blob, url: string): Promise<void> {
  const kind = previewKind(name);
  into.dataset.preview = kind ?? 'none';
  if (kind === 'image') into.append(el('img', { className: 'full', alt: name, src: url }));
  else if (kind === 'pdf') into.append(el('iframe', { className: 'pdf', title: name, src: url }));
  else if (kind === 'text') into.append(el('pre', { className: 'tx', textContent: new TextDecoder().decode(await blob.slice(0, TEXT_MAX).arrayBuffer()) }));
}

/** The PIN form posts to the link's address, which would drop the fragment: carry it into the form's action. */
function keepFragment(form: HTMLFormElement): void {
  if (!location.hash) return;
  const action = new URL(form.getAttribute('action') || location.pathname, location.href);
  action.hash = location.hash;
  form.setAttribute('action', action.pathname + action.search + action.hash);
}

const root = document.getElementById('vault-link');
if (root) {
  void open(root, JSON.parse(root.dataset.strings ?? '{}') as Strings);
  // Another key pasted into the same address changes only the fragment: the page starts over with it.
  addEventListener('hashchange', () => location.reload());
} else {
  const form = document.querySelector<HTMLFormElement>('form[method=post]');
  if (form) keepFragment(form);
}
