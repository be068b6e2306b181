/**
 * The decrypted bytes of an encrypted row for a preview: a Blob and its blob URL, or the failure in words;
 * for video and audio, where the stream worker runs, the address of a player page that decrypts by ranges
 * as it plays and seeks (never the whole file first).
 */
import { useEffect, useState } from 'react';
import { useI18n } from '../i18n';
import type { ShownEntry } from './use-vault-folder';
import { decryptedFile, mediaFrame } from './vault-download';
import { mimeOfName } from './media';
import { vaultErrorText } from './vault-words';

export interface Decrypted {
  blob?: Blob;
  url?: string;
  /** A media player page's address (vault-stream.ts), instead of `blob`/`url`. */
  frame?: string;
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
    let player: { close(): void } | null = null;
    const failed = (e: unknown) => !ctrl.signal.aborted && setGot({ error: vaultErrorText(e, t) });
    const whole = () =>
      decryptedFile(row.vault_folder, row, ctrl.signal).then((blob) => {
        if (ctrl.signal.aborted) return;
        url = URL.createObjectURL(blob);
        setGot({ blob, url });
      }, failed);
    if (/^(video|audio)\//.test(mimeOfName(row.name)))
      void mediaFrame(row.vault_folder, row).then((p) => {
        if (!p) return whole();
        if (ctrl.signal.aborted) return p.close();
        player = p;
        setGot({ frame: p.url });
      }, failed);
    else void whole();
    return () => {
      ctrl.abort();
      player?.close();
      if (url) URL.revokeObjectURL(url);
    };
    // One decryption per file shown (the row object is rebuilt on every listing render).
  }, [path, row?.modified, t]);
  return got;
}
