/**
 * The Files page's view of an encrypted folder: which encrypted folder the
 * open path is in, its keyring once the vault is unlocked, and the listing's
 * rows with their names decrypted (sorted by those names; an undecryptable
 * one shows as "Unreadable item", never its ciphertext as a name) and their
 * thumbnails decrypted. Outside encrypted folders the rows pass unchanged.
 */
import { useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import type { Entry, Listing, SortDir, SortKey } from '../api/types';
import { useI18n } from '../i18n';
import { entryComparator } from '../lib/natural-sort';
import { crumbs as crumbsOf, joinPath } from '../lib/ui-path';
import { useToast } from '../ui/toast';
import type { FolderKeyring } from './crypto';
import type { VaultFolder } from './vault-api';
import { filterByName, type VaultEntry } from './vault-paths';
import { folderOfPath, folderRing, forgetFolders, onLock, requestUnlock, useVault, vaultCrypto } from './vault-store';
import { dropThumbs, NameTaken, thumbStored, uploadEncrypted, vaultThumb } from './vault-files';
import { downloadRow } from './vault-download';
import { plainSize } from './vault-sizes';
import type { Picked } from '../upload/drop';
import { mimeOfName } from './media';
import { isCancelled, vaultErrorText } from './vault-words';
import './vault.css';

/** A row decrypted for display: `path` keeps the stored path every server call uses. */
export type ShownEntry = VaultEntry & { path: string; vault_folder: number };

/** The rows last shown per folder path, for checks made away from the page (rename, new folder). */
const shownByPath = new Map<string, ShownEntry[]>();
export const shownIn = (path: string): ShownEntry[] => shownByPath.get(path) ?? [];

export interface VaultFolderView {
  /** The encrypted folder the open path is in; null in a plain folder (and while unknown). */
  folder: VaultFolder | null;
  /** The rows shown are not the listing's (decrypted, or held back): the listing's total does not apply. */
  own: boolean;
  entries: Entry[];
  /** What to show instead of the rows (locked, no vault, a key error), or null. */
  gate: ReactNode;
  /** The breadcrumb's label of a folder on the open path: decrypted below an encrypted root. */
  crumb(crumbPath: string, name: string): string;
  /** The browser-side filter of an encrypted folder, shaped as a search answer. */
  filter(text: string): Listing;
  /** Whether the open folder is encrypted (waits for the vault's folder list while it is read). */
  encrypted(): Promise<boolean>;
  /** Encrypts and queues picked files (and dropped folders) into the open encrypted folder. */
  upload(picked: Picked): Promise<void>;
  /** Decrypts a file of the open encrypted folder and saves it under its name. */
  download(e: Entry): Promise<void>;
}

const decrypting = new Map<number, Map<string, Promise<string | null>>>();
onLock(() => {
  decrypting.clear();
  shownByPath.clear();
  dropThumbs();
});

function decryptedName(folderId: number, ring: FolderKeyring, stored: string): Promise<string | null> {
  let names = decrypting.get(folderId);
  if (!names) decrypting.set(folderId, (names = new Map()));
  let p = names.get(stored);
  if (!p) {
    p = vaultCrypto()
      .then((c) => c.decryptName(ring, stored))
      .catch(() => null);
    names.set(stored, p);
  }
  return p;
}

export function useVaultFolder(path: string, raw: Entry[], sort: SortKey, dir: SortDir, storage: Listing['storage'] | null): VaultFolderView {
  const { t } = useI18n();
  const toast = useToast();
  const vault = useVault();
  // Tagged with the path it was found for, so a folder found for the previous path is never applied to this one.
  const [found, setFound] = useState<{ path: string; folder: VaultFolder | null }>({ path: '', folder: null });
  const folder = found.path === path ? found.folder : null;
  const [ring, setRing] = useState<{ ring: FolderKeyring } | { error: unknown } | null>(null);
  const [names, setNames] = useState<Map<string, string | null>>(new Map());
  const [thumbs, setThumbs] = useState<Map<string, string>>(new Map());
  const hasEncrypted = raw.some((e) => (e as VaultEntry).encrypted && !(e as VaultEntry).vault_folder_id);
  const retried = useRef('');

  const none = vault.state === 'none';
  useEffect(() => {
    let live = true;
    const set = (f: VaultFolder | null) => {
      if (live) setFound((o) => (o.path === path && o.folder?.id === f?.id ? o : { path, folder: f }));
    };
    if (none || !vault.loaded) return set(null);
    folderOfPath(path).then(
      (f) => {
        // Rows marked encrypted in a folder the cached list does not know: a folder shared since; read the list again once.
        if (f || !hasEncrypted || retried.current === path) return set(f);
        retried.current = path;
        forgetFolders();
        return folderOfPath(path).then(set);
      },
      () => set(null),
    );
    return () => {
      live = false;
    };
  }, [path, none, vault.loaded, hasEncrypted]);

  useEffect(() => {
    setRing(null);
    setNames(new Map());
    if (!folder || vault.state !== 'unlocked') return;
    let live = true;
    folderRing(folder.id).then(
      (r) => live && setRing({ ring: r }),
      (error) => live && !isCancelled(error) && setRing({ error }),
    );
    return () => {
      live = false;
    };
  }, [folder, vault.state]);

  const keyring = ring && 'ring' in ring ? ring.ring : null;
  useEffect(() => {
    if (!keyring || !folder) return;
    let live = true;
    void Promise.all(raw.map(async (e) => [e.name, await decryptedName(folder.id, keyring, e.name)] as const)).then(
      (pairs) => live && setNames(new Map(pairs)),
    );
    return () => {
      live = false;
    };
  }, [folder, keyring, raw]);

  // The open path's segments below the encrypted root, decrypted for the breadcrumb.
  const [crumbs, setCrumbs] = useState<Map<string, string>>(new Map());
  useEffect(() => {
    if (!folder || !keyring) return setCrumbs(new Map());
    let live = true;
    const below = crumbsOf(path).filter((c) => c.path.length > folder.path.length);
    void Promise.all(below.map(async (c) => [c.path, (await decryptedName(folder.id, keyring, c.name)) ?? t('vault.unreadable')] as const)).then(
      (pairs) => live && setCrumbs(new Map(pairs)),
    );
    return () => {
      live = false;
    };
  }, [folder, keyring, path, t]);

  // True sizes of the files (the listing has the padded ciphertext's), a few at a time; shown in batches as they come.
  const [sizes, setSizes] = useState<Map<string, number>>(new Map());
  useEffect(() => {
    setSizes(new Map());
    if (!folder || !keyring) return;
    let live = true;
    const got = new Map<string, number>();
    let timer: ReturnType<typeof setTimeout> | null = null;
    const show = () => {
      timer = null;
      if (live) setSizes(new Map(got));
    };
    for (const e of raw) {
      if (e.type !== 'file') continue;
      const p = joinPath(path, e.name);
      void plainSize(folder.id, p, e.size, e.modified).then((n) => {
        if (n === null || !live) return;
        got.set(p, n);
        timer ??= setTimeout(show, 100);
      });
    }
    return () => {
      live = false;
      if (timer) clearTimeout(timer);
    };
  }, [folder, keyring, raw, path]);

  const entries = useMemo((): Entry[] => {
    // Never a stored (encrypted) name as if it were a name: such rows wait for their folder's keys.
    if (!folder) return hasEncrypted ? raw.filter((e) => !(e as VaultEntry).encrypted || (e as VaultEntry).vault_folder_id) : raw;
    if (!keyring) return [];
    const out: ShownEntry[] = [];
    for (const e of raw) {
      if (!names.has(e.name)) continue;
      const plain = names.get(e.name);
      const p = joinPath(path, e.name);
      out.push({
        ...e,
        name: plain ?? t('vault.unreadable'),
        unreadable: plain === null,
        // The list shows it under the name, so an unreadable row says why.
        snippet: plain === null ? t('vault.err.integrity') : undefined,
        cipher_name: e.name,
        size: sizes.get(p) ?? e.size,
        cipher_size: e.size,
        path: p,
        vault_folder: folder.id,
        mime: e.type === 'file' && plain ? mimeOfName(plain) : undefined,
        is_image: !!plain && mimeOfName(plain).startsWith('image/'),
        thumb_url: thumbs.get(p) ?? '',
      });
    }
    shownByPath.set(path, out);
    return out.sort(entryComparator(sort, dir));
  }, [folder, hasEncrypted, keyring, raw, names, thumbs, sizes, path, sort, dir, t]);

  // Thumbnails of images, one at a time; each is asked once per file version, and again once one is stored.
  const [thumbTick, setThumbTick] = useState(0);
  useEffect(() => {
    const again = () => setThumbTick((n) => n + 1);
    thumbStored.addEventListener('stored', again);
    return () => thumbStored.removeEventListener('stored', again);
  }, []);
  useEffect(() => {
    if (!folder || !keyring) return;
    let live = true;
    const want = (entries as ShownEntry[]).filter((e) => e.is_image && !e.thumb_url);
    void (async () => {
      for (const e of want) {
        const url = await vaultThumb(folder.id, e);
        if (!live) return;
        if (url) setThumbs((m) => new Map(m).set(e.path, url));
      }
    })();
    return () => {
      live = false;
    };
  }, [folder, keyring, entries, thumbTick]);

  const unlock = () => void requestUnlock().catch((e) => isCancelled(e) || toast.error(e));
  let gate: ReactNode = null;
  if (hasEncrypted && vault.loaded && vault.state === 'none') gate = <Gate text={t('vault.gate.none')} />;
  else if (folder && vault.state === 'locked')
    gate = (
      <Gate text={t('vault.gate.locked')}>
        <button type="button" className="primary" onClick={unlock}>
          {t('vault.unlock')}
        </button>
      </Gate>
    );
  else if (ring && 'error' in ring) gate = <Gate text={vaultErrorText(ring.error, t)} />;
  else if (folder && keyring && names.size < raw.length && !entries.length) gate = <Gate text={t('vault.decrypting')} />;

  const filter = (text: string): Listing => {
    const found = filterByName(entries as ShownEntry[], text);
    return { path, entries: found, total: found.length, storage: storage ?? { name: '', driver: '', readonly: false } };
  };
  const shown = entries as ShownEntry[];
  // Files picked right after the folder opened, before its vault folder was found, still go encrypted.
  const folderNow = async () => folder ?? (none ? null : await folderOfPath(path).catch(() => null));
  const encrypted = async () => !!(await folderNow());
  const upload = async (picked: Picked) => {
    const f = await folderNow();
    if (!f) throw new Error(vaultErrorText(new Error('not an encrypted folder'), t));
    return uploadEncrypted(f.id, path, picked, shown).catch((e) => {
      if (isCancelled(e)) return;
      throw new Error(e instanceof NameTaken ? t('vault.exists', { name: e.taken }) : vaultErrorText(e, t));
    });
  };
  const download = (e: Entry) => downloadRow(e as ShownEntry, t);
  const crumb = (p: string, name: string) => crumbs.get(p) ?? name;
  return { folder, own: !!folder || hasEncrypted, entries, gate, crumb, filter, encrypted, upload, download };
}

function Gate({ text, children }: { text: string; children?: ReactNode }) {
  return (
    <div className="vault-gate" data-testid="vault-gate" role="status">
      <p>{text}</p>
      {children}
    </div>
  );
}
