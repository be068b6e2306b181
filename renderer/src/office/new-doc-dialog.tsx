/**
 * "New document…": a type from the server's `newdoc_types` and a name shown
 * with its extension (changing the type swaps the extension; only the name
 * part is pre-selected). Refusals stay in the dialog with the server's message.
 */
import { useState } from 'react';
import type { NewdocType } from '../api/types';
import { useI18n, type MessageKey } from '../i18n';
import { Dialog } from '../ui/dialog';
import { FormFooter } from '../ui/forms';
import { useSubmit } from '../ui/use-submit';

const GROUP: Record<string, MessageKey> = {
  word: 'newdoc.word',
  cell: 'newdoc.cell',
  slide: 'newdoc.slide',
  text: 'newdoc.text',
  diagram: 'newdoc.diagram',
};

const stem = (name: string) => (name.lastIndexOf('.') > 0 ? name.slice(0, name.lastIndexOf('.')) : name);

interface Props {
  types: NewdocType[];
  /** Resolves once the document exists; a rejection is shown in the dialog. */
  onSubmit: (name: string, type: NewdocType) => Promise<void>;
  onClose: () => void;
}

export function NewDocDialog({ types, onSubmit, onClose }: Props) {
  const { t } = useI18n();
  const [type, setType] = useState<NewdocType>(types[0]);
  const [name, setName] = useState(`${t('newdoc.default_name')}.${types[0].ext}`);
  const { submit, busy, error } = useSubmit(async () => {
    await onSubmit(name.trim(), type);
    onClose();
  });
  const pick = (ext: string) => {
    const next = types.find((x) => x.ext === ext) ?? types[0];
    setType(next);
    setName(`${stem(name) || t('newdoc.default_name')}.${next.ext}`);
  };
  return (
    <Dialog title={t('newdoc.title')} onClose={onClose}>
      <form onSubmit={submit} className="form">
        <label>
          {t('newdoc.type')}
          <select value={type.ext} onChange={(e) => pick(e.target.value)}>
            {types.map((x) => (
              <option key={x.ext} value={x.ext}>
                {GROUP[x.group] ? t(GROUP[x.group]) : x.group} (.{x.ext})
              </option>
            ))}
          </select>
        </label>
        <label>
          {t('files.file_name')}
          <input
            data-autofocus
            required
            value={name}
            onChange={(e) => setName(e.target.value)}
            onFocus={(e) => e.target.setSelectionRange(0, stem(e.target.value).length)}
          />
        </label>
        <FormFooter error={error} disabled={busy || !name.trim()} submitLabel={t('common.create')} onCancel={onClose} />
      </form>
    </Dialog>
  );
}
