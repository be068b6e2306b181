/** Create a download link: expiry, PIN (own or generated, shown once), download cap, comment. */
import { useState } from 'react';
import type { ShareCreated } from '../api/types';
import { useI18n } from '../i18n';
import { Dialog } from '../ui/dialog';
import { useSubmit } from '../ui/use-submit';
import { FormFooter } from '../ui/forms';
import { baseName } from '../lib/ui-path';
import { createShare, type ShareInput } from './share-api';
import { LinkResult } from './link-result';
import { LinkOptions, optionsToInput, defaultOptions, type LinkOptionsState } from './link-options';

export function ShareDialog({ path, onClose }: { path: string; onClose: () => void }) {
  const { t } = useI18n();
  const [opts, setOpts] = useState<LinkOptionsState>(defaultOptions);
  const [link, setLink] = useState<ShareCreated | null>(null);
  const { submit, busy, error } = useSubmit(async () => {
    const input: ShareInput = optionsToInput(opts);
    setLink(await createShare(path, input));
  });

  return (
    <Dialog title={t('share.title', { name: baseName(path) })} onClose={onClose}>
      {link ? (
        <LinkResult link={link} asked={optionsToInput(opts)} downloads />
      ) : (
        <form className="form" onSubmit={submit}>
          <LinkOptions value={opts} onChange={setOpts} downloads />
          <FormFooter error={error} disabled={busy} submitLabel={t('share.create')} onCancel={onClose} />
        </form>
      )}
    </Dialog>
  );
}
