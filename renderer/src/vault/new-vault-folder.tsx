/**
 * "New encrypted folder" in a plain folder: a name, then the vault is unlocked
 * if needed, the server makes the folder and the first folder key is wrapped
 * for its id. Without a vault the dialog says where to set one up.
 */
import { useI18n } from '../i18n';
import { linkClick } from '../lib/router';
import { Dialog } from '../ui/dialog';
import { NameDialog } from '../ui/forms';
import { createEncryptedFolder, useVault } from './vault-store';
import { isCancelled, vaultErrorText } from './vault-words';

export function NewVaultFolder({ path, onClose, onMade }: { path: string; onClose: () => void; onMade: () => void }) {
  const { t } = useI18n();
  const vault = useVault();
  if (vault.loaded && vault.state === 'none')
    return (
      <Dialog title={t('vault.new_folder')} onClose={onClose}>
        <p>{t('vault.new_folder.needs')}</p>
        <div className="actions">
          <a className="button primary" href="/account/vault" onClick={(e) => (onClose(), linkClick(e))}>
            {t('vault.title')}
          </a>
        </div>
      </Dialog>
    );
  return (
    <NameDialog
      title={t('vault.new_folder')}
      label={t('files.folder_name')}
      submitLabel={t('common.create')}
      onClose={onClose}
      onSubmit={async (name) => {
        try {
          await createEncryptedFolder(path, name);
        } catch (e) {
          if (isCancelled(e)) return;
          throw new Error(vaultErrorText(e, t));
        }
        onMade();
      }}
    />
  );
}
