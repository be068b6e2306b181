/** Pure helpers over encrypted folders' paths and rows (no crypto, no DOM). */
import type { Entry } from '../api/types';
import { isInside } from '../lib/ui-path';

/** A listing row as the vault UI holds it: the server's fields, and the decrypted name for display. */
export type VaultEntry = Entry & {
  /** Set by the server at and below an encrypted root. */
  encrypted?: boolean;
  /** Set by the server on an encrypted root's row. */
  vault_folder_id?: number;
  /** The stored (encrypted) name, when `name` holds the decrypted one. */
  cipher_name?: string;
  /** The stored (ciphertext) size, when `size` holds the true one. */
  cipher_size?: number;
  /** The name did not decrypt: `name` is a placeholder and the row shows the integrity error. */
  unreadable?: boolean;
};

/** A row below an encrypted root: its name is ciphertext, never to be shown as a name (the root's own name is plain). */
export const isCipherRow = (e: Entry): boolean => !!(e as VaultEntry).encrypted && !(e as VaultEntry).vault_folder_id;

/** The folder whose root is `path` or holds it (the deepest one, should roots ever nest). */
export function folderAt<F extends { path: string }>(folders: readonly F[], path: string): F | null {
  let best: F | null = null;
  for (const f of folders) if (isInside(path, f.path) && (!best || f.path.length > best.path.length)) best = f;
  return best;
}

/** Names are compared as people see them: Unicode NFC (the crypto module encrypts NFC too). */
export const sameName = (a: string, b: string): boolean => a.normalize('NFC') === b.normalize('NFC');

/** The row already holding the decrypted `name`, if any (the server cannot see that conflict across key versions). */
export function takenBy<E extends { name: string; unreadable?: boolean }>(entries: readonly E[], name: string): E | undefined {
  return entries.find((e) => !e.unreadable && sameName(e.name, name));
}

/** The browser-side filter of an encrypted folder: every word must appear in the decrypted name (case-insensitive). */
export function filterByName<E extends { name: string; unreadable?: boolean }>(entries: readonly E[], query: string): E[] {
  const words = query.normalize('NFC').toLocaleLowerCase().split(/\s+/).filter(Boolean);
  return entries.filter((e) => !e.unreadable && words.every((w) => e.name.normalize('NFC').toLocaleLowerCase().includes(w)));
}

/** `a/b/c.txt` -> its segments, each to be encrypted on its own. */
export const segments = (rel: string): string[] => rel.split('/').filter(Boolean);
