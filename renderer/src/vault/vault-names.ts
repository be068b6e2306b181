/** New folder and rename inside an encrypted folder, for the Files dialogs: the name is encrypted, the failure in words. */
import type { Entry } from '../api/types';
import type { Translate } from '../i18n';
import { parentPath } from '../lib/ui-path';
import { shownIn, type ShownEntry } from './use-vault-folder';
import { mkdirEncrypted, NameTaken, renameEncrypted } from './vault-files';
import { vaultErrorText } from './vault-words';

const worded = (t: Translate) => (e: unknown) => {
  throw new Error(e instanceof NameTaken ? t('vault.exists', { name: e.taken }) : vaultErrorText(e, t));
};

/** Makes the encrypted subfolder `name` in `dir`; answers its stored name. */
export const mkdir = (folderId: number, dir: string, name: string, t: Translate): Promise<string> =>
  mkdirEncrypted(folderId, dir, name, shownIn(dir)).catch(worded(t));

/** The row as the vault shows it, when it is one (it then carries its folder and stored name). */
export const shownRow = (e: Entry): ShownEntry | null => {
  const v = e as Partial<ShownEntry>;
  return v.vault_folder && v.cipher_name ? (v as ShownEntry) : null;
};

export const rename = (row: ShownEntry, path: string, name: string, t: Translate): Promise<string> =>
  renameEncrypted(row.vault_folder, path, name, shownIn(parentPath(path))).catch(worded(t));
