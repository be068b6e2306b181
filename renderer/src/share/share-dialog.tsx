/**
 * Create a download link: expiry, PIN (own or generated, shown once), download cap, comment.
 * A file in an encrypted folder gets the same link with its content key and true name in the
 * fragment (`#k=…&n=…`, vault/link-fragment.ts), which browsers never send to the server.
 */
import { useState } from 'react';
import type { ShareCreated } from '../api/types';
import { useI18n } from '../i18n';
import { Dialog } from '../ui/dialog';
import { useSubmit } from '../ui/use-submit';
import { FormFooter } from '../ui/forms';
import { baseName } from '../lib/ui-path';
import { linkKeyOf } from '../vault/link-key';
import type { VaultEntry } from '../vault/vault-paths';
import { linkHash } from '../vault/link-fragment';
import { createShare, type ShareInput } from './share-api';
import { LinkResult } from './link-result';
import { LinkOptions, optionsToInput, defaultOptions, type LinkOptionsState } from './link-options';

export function ShareDialog({ path, entry, onClose }: { path: string; entry?: VaultEntry; onClose: () => void }) {
  const { t } = useI18n();
  const [opts, setOpts] = useState<LinkOptionsState>(defaultOptions);
  const [link, setLink] = useState<ShareCreated | null>(null);
  const encrypted = !!entry?.encrypted;
  const name = entry?.name ?? baseName(path);
  const { submit, busy, error } = useSubmit(async () => {
    const input: ShareInput = optionsToInput(opts);
    // The key first: a locked vault or an unreadable header makes no link at all.
    const key = encrypted ? await linkKeyOf(path) : null;
    const made = await createShare(path, input);
    setLink(key ? { ...made, url: made.url + linkHash(key, name) } : made);
  });

  return (
    <Dialog title={t('share.title', { name })} onClose={onClose}>
      {link ? (
        <LinkResult
          link={link}
          asked={optionsToInput(opts)}
          downloads
          note={
            encrypted && (
              <p className="warn" role="note" data-testid="vault-link-note">
                {t('share.vault.key_in_link')}
              </p>
            )
          }
        />
      ) : (
        <form className="form" onSubmit={submit}>
          {encrypted && <p className="hint">{t('share.vault.intro')}</p>}
          <LinkOptions value={opts} onChange={setOpts} downloads />
          <FormFooter error={error} disabled={busy} submitLabel={t('share.create')} onCancel={onClose} />
        </form>
      )}
    </Dialog>
  );
}
