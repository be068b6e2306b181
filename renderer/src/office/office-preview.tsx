/**
 * The read-only preview of an office document without a document server: its
 * PDF rendition (`GET /api/files/pdf`, made by LibreOffice on the server). A
 * HEAD request waits for the conversion (shown as loading; a refusal is read
 * again with GET for the envelope's message), then the browser's PDF viewer
 * opens the rendition under a URL ending in `<name>.pdf`: the viewer titles
 * and saves the document by it (a blob URL made that a UUID). A paired device
 * still needs a blob URL (its key travels in a header; see device/signed-src).
 */
import { useEffect, useState } from 'react';
import { fetchSigned, toApiError } from '../api/client';
import { useI18n } from '../i18n';
import { errorText } from '../ui/toast';
import { useSignedSrc } from '../device/signed-src';
import { namedPdfUrl } from './office-files';

export function OfficePdfPreview({ path, name }: { path: string; name: string }) {
  const { t } = useI18n();
  const url = namedPdfUrl(path, name);
  const [ready, setReady] = useState(false);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const ctrl = new AbortController();
    setReady(false);
    setError(null);
    fetchSigned(url, { method: 'HEAD', signal: ctrl.signal })
      .then(async (r) => {
        if (!r.ok) throw await toApiError(await fetchSigned(url, { signal: ctrl.signal }));
        setReady(true);
      })
      .catch((e) => !ctrl.signal.aborted && setError(errorText(e, t)));
    return () => ctrl.abort();
  }, [url, t]);
  const src = useSignedSrc(ready ? url : undefined);
  if (error)
    return (
      <p className="error" role="alert">
        {error}
      </p>
    );
  if (!src) return <p aria-busy="true">{t('office.converting')}</p>;
  return <iframe src={src} title={name} data-testid="office-pdf" />;
}
