/** Create a file request (a blind drop into a folder) with its drop settings. */
import { useState } from 'react';
import type { ShareCreated } from '../api/types';
import { useI18n } from '../i18n';
import { Dialog } from '../ui/dialog';
import { useSubmit } from '../ui/use-submit';
import { FormFooter } from '../ui/forms';
import { baseName } from '../lib/ui-path';
import { createRequest } from './share-api';
import { LinkResult } from './link-result';
import { LinkOptions, optionsToInput, defaultOptions, type LinkOptionsState } from './link-options';

export function RequestDialog({ path, onClose }: { path: string; onClose: () => void }) {
  const { t } = useI18n();
  const [opts, setOpts] = useState<LinkOptionsState>(defaultOptions);
  const [drop, setDrop] = useState({ max_files: '20', max_file_size_mb: '500', allowed_ext: '', ask_name: true, max_uploads: '' });
  const [link, setLink] = useState<ShareCreated | null>(null);
  const { submit, busy, error } = useSubmit(async () => {
    setLink(
      await createRequest(path, {
        ...optionsToInput(opts),
        drop_settings: {
          max_files: Number(drop.max_files),
          max_file_size_mb: Number(drop.max_file_size_mb),
          allowed_ext: drop.allowed_ext
            .split(/[\s,]+/)
            .map((x) => x.replace(/^\./, '').toLowerCase())
            .filter(Boolean),
          ask_name: drop.ask_name,
        },
        ...(drop.max_uploads ? { max_uploads: Number(drop.max_uploads) } : {}),
      }),
    );
  });

  return (
    <Dialog title={t('request.title', { name: baseName(path) })} onClose={onClose}>
      {link ? (
        <LinkResult link={link} asked={optionsToInput(opts)} />
      ) : (
        <form className="form" onSubmit={submit}>
          <LinkOptions value={opts} onChange={setOpts} />
          <label>
            {t('request.max_files')}
            <input type="number" min={1} required value={drop.max_files} onChange={(e) => setDrop({ ...drop, max_files: e.target.value })} />
          </label>
          <label>
            {t('request.max_file_size_mb')}
            <input type="number" min={1} required value={drop.max_file_size_mb} onChange={(e) => setDrop({ ...drop, max_file_size_mb: e.target.value })} />
          </label>
          <label>
            {t('request.allowed_ext')}
            <input value={drop.allowed_ext} placeholder="pdf, jpg" onChange={(e) => setDrop({ ...drop, allowed_ext: e.target.value })} />
          </label>
          <label>
            {t('request.max_uploads')}
            <input type="number" min={1} value={drop.max_uploads} onChange={(e) => setDrop({ ...drop, max_uploads: e.target.value })} />
          </label>
          <label className="check">
            <input type="checkbox" checked={drop.ask_name} onChange={(e) => setDrop({ ...drop, ask_name: e.target.checked })} />
            {t('request.ask_name')}
          </label>
          <FormFooter error={error} disabled={busy} submitLabel={t('share.create')} onCancel={onClose} />
        </form>
      )}
    </Dialog>
  );
}
