/**
 * The read-only preview of an office document without a document server: its
 * PDF rendition (`GET /api/files/pdf`, made by LibreOffice on the server),
 * fetched into a blob URL so the conversion's wait shows as loading and a
 * refusal shows the envelope's message, then shown by the browser's PDF viewer.
 */
import { useEffect, useState } from 'react';
import { fetchSigned, toApiError } from '../api/client';
import { useI18n } from '../i18n';
import { errorText } from '../ui/toast';
import { pdfUrl } from './office-files';

export function OfficePdfPreview({ path, name }: { path: string; name: string }) {
  const { t } = useI18n();
  const [src, setSrc] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const ctrl = new AbortController();
    let url: string | null = null;
    setSrc(null);
    setError(null);
    fetchSigned(pdfUrl(path), { signal: ctrl.signal })
      .then(async (r) => {
        if (!r.ok) throw await toApiError(r);
        url = URL.createObjectURL(await r.blob());
        setSrc(url);
      })
      .catch((e) => !ctrl.signal.aborted && setError(errorText(e, t)));
    return () => {
      ctrl.abort();
      if (url) URL.revokeObjectURL(url);
    };
  }, [path, t]);
  if (error) return <p className="error" role="alert">{error}</p>;
  if (!src) return <p aria-busy="true">{t('office.converting')}</p>;
  return <iframe src={src} title={name} data-testid="office-pdf" />;
}
