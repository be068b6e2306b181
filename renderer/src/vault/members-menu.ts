/**
 * The Files page's items for sharing encrypted folders: "Members…" on an
 * encrypted root (its row in the parent folder, or the open root itself), and
 * which items make links: links to encrypted folders and file requests into
 * them are not offered (the server refuses them, docs/vault.md "Links").
 */
import type { Entry } from '../api/types';
import type { Translate } from '../i18n';
import type { MenuItem } from '../files/context-menu';
import type { DialogState } from '../files/files-dialogs';
import type { VaultEntry } from './vault-paths';

/** The encrypted folder a row is the root of, if it is one. */
export function rootOf(e: Entry | null | undefined): { id: number; name: string } | null {
  const id = (e as VaultEntry | null | undefined)?.vault_folder_id;
  return e && id ? { id, name: e.name } : null;
}

export const membersItems = (t: Translate, root: { id: number; name: string } | null, open: (d: DialogState) => void): MenuItem[] =>
  root ? [{ label: t('vault.members'), onSelect: () => open({ kind: 'members', folderId: root.id, name: root.name }) }] : [];

/** Whether a row may get a link or a file request: anything but a folder in (or the root of) an encrypted folder. */
export const linkable = (e: Entry | null | undefined): boolean => !(e?.type === 'dir' && (e as VaultEntry).encrypted);
