/** The decrypted bytes of an encrypted row for a preview: a Blob and its blob URL, or the failure in words. */
import { useEffect, useState } from 'react';
import { useI18n } from '../i18n';
import type { ShownEntry } from './use-vault-folder';
import { decryptedFile } from './vault-download';
import { vaultErrorText } from './vault-words';

export interface Decrypted {
  blob?: Blob;
  url?: string;
  error?: string;
}

/** Nothing for a plain row (null); for an encrypted one, the decrypted file once every chunk verified. */
export function useDecrypted(row: ShownEntry | null): Decrypted {
  const { t } = useI18n();
  const [got, setGot] = useState<Decrypted>({});
  const path = row?.path;
  useEffect(() => {
    setGot({});
    if (!row) return;
    const ctrl = new AbortController();
    let url: string | undefined;
    decryptedFile(row.vault_folder, row, ctrl.signal).then(
      (blob) => {
        if (ctrl.signal.aborted) return;
        url = URL.createObjectURL(blob);
        setGot({ blob, url });
      },
      (e) => !ctrl.signal.aborted && setGot({ error: vaultErrorText(e, t) }),
    );
    return () => {
      ctrl.abort();
      if (url) URL.revokeObjectURL(url);
    };
    // One decryption per file shown (the row object is rebuilt on every listing render).
  }, [path, row?.modified, t]);
  return got;
}
