/**
 * Previews: images, video, audio and PDF straight from the raw route (the
 * browser's own viewers, with byte ranges for seeking), text and code fetched
 * (first 1 MiB) and coloured. Left/Right page through the folder's previewable files.
 * A file with no preview shows the info panel (file-info.tsx) instead.
 */
import { lazy, Suspense, useEffect, useState } from 'react';
import type { Entry } from '../api/types';
import { fetchSigned, toApiError } from '../api/client';
import { useI18n } from '../i18n';
import { Dialog } from '../ui/dialog';
import { errorText } from '../ui/toast';
import { formatBytes } from '../lib/format';
import { rawUrl } from './file-api';
import { withBase } from '../lib/base';
import { isTextName } from './highlight';
import { kindOf } from './icons';
import { Code } from './code-view';
import { saveSigned, useSignedSrc } from '../device/signed-src';
import { useToast } from '../ui/toast';
import { isMermaidName } from './mermaid/mermaid-name';
import { officeOpenTarget } from '../office/office-files';
import { OfficePdfPreview } from '../office/office-preview';
import type { OpenRule } from '../apps/apps-api';
import { FileInfo } from './file-info';
import { shownRow } from '../vault/vault-names';
import { useDecrypted } from '../vault/use-decrypted';
import { downloadRow } from '../vault/vault-download';

const TEXT_MAX = 1024 * 1024;
// markdown-it is loaded only when a Markdown file is previewed.
const MarkdownView = lazy(() => import('./markdown-view'));
const isMarkdown = (name: string) => /\.(md|markdown)$/i.test(name);
// Mermaid diagrams are drawn in a sandboxed frame, its code loaded only then.
const MermaidView = lazy(() => import('./mermaid/mermaid-view'));

/** Whether the preview dialog can show this entry (otherwise it shows the info panel). */
export function canPreview(e: Entry): boolean {
  // An encrypted file has no server rendition: office documents open the info panel there.
  const office = isOfficePdf(e) && !shownRow(e);
  return e.type === 'file' && (['image', 'video', 'audio', 'pdf'].includes(kindOf(e)) || isTextName(e.name, e.mime) || isMermaidName(e.name) || office);
}

/** Office documents preview as their PDF rendition (read-only; the editor needs a document server). */
const isOfficePdf = (e: Pick<Entry, 'name' | 'type'>) => officeOpenTarget(e, null) === 'pdf';

interface Props {
  entry: Entry;
  path: string;
  onPrev?: () => void;
  onNext?: () => void;
  onEdit?: () => void;
  onOpenWith?: (rule: OpenRule) => void;
  onClose: () => void;
}

export function Preview({ entry, path, onPrev, onNext, onEdit, onOpenWith, onClose }: Props) {
  const { t } = useI18n();
  const toast = useToast();
  // "Show as text" from the info panel forces the text preview of a file we do not know.
  const [asText, setAsText] = useState(false);
  useEffect(() => setAsText(false), [path]);
  const info = !canPreview(entry) && !asText;
  const kind = kindOf(entry);
  const native = !asText && ['image', 'video', 'audio', 'pdf'].includes(kind);
  // An encrypted file is decrypted here first (vault/use-decrypted); what fails to verify is never shown.
  const vaultRow = shownRow(entry);
  const plain = useDecrypted(info ? null : vaultRow);
  const office = !native && !asText && isOfficePdf(entry) && !vaultRow;
  const download = () => void (vaultRow ? downloadRow(vaultRow, t) : saveSigned(rawUrl(path, false), entry.name)).catch(toast.error);
  // On a paired device the bytes come with its key (see device/signed-src).
  const signed = useSignedSrc(native && !vaultRow ? rawUrl(path) : undefined);
  const src = vaultRow ? plain.url : signed;
  const shownNative = native && (!vaultRow || !!plain.blob);
  useEffect(() => {
    const key = (e: KeyboardEvent) => {
      if ((e.target as HTMLElement).closest('video,audio')) return;
      if (e.key === 'ArrowLeft' && onPrev) onPrev();
      else if (e.key === 'ArrowRight' && onNext) onNext();
    };
    window.addEventListener('keydown', key);
    return () => window.removeEventListener('keydown', key);
  }, [onPrev, onNext]);

  return (
    <Dialog title={t(info ? 'info.title' : 'preview.title', { name: entry.name })} onClose={onClose} wide={!info}>
      {info ? (
        <FileInfo entry={entry} path={path} onDownload={download} onAsText={() => setAsText(true)} onOpenWith={onOpenWith} />
      ) : (
        <div className="preview" data-testid="preview">
          {plain.error && (
            <p className="error" role="alert" data-testid="vault-integrity">
              {plain.error}
            </p>
          )}
          {vaultRow && !plain.blob && !plain.frame && !plain.error && <p aria-busy="true">{t('vault.decrypting')}</p>}
          {plain.frame && <iframe className="vault-player" src={plain.frame} title={entry.name} allow="autoplay; fullscreen" data-testid="vault-player" />}
          {shownNative && kind === 'image' && <img src={src} alt={entry.name} />}
          {shownNative && kind === 'video' && <video src={src} controls autoPlay aria-label={entry.name} />}
          {shownNative && kind === 'audio' && <audio src={src} controls autoPlay aria-label={entry.name} />}
          {shownNative && kind === 'pdf' && <iframe src={src} title={entry.name} />}
          {office && <OfficePdfPreview path={path} name={entry.name} />}
          {!native && !office && (!vaultRow || plain.blob) && <TextPreview entry={entry} path={path} blob={plain.blob} />}
        </div>
      )}
      {!info && (
        <div className="actions spread">
          <span>
            {onPrev && (
              <button type="button" onClick={onPrev}>
                ← {t('preview.prev')}
              </button>
            )}
            {onNext && (
              <button type="button" onClick={onNext}>
                {t('preview.next')} →
              </button>
            )}
          </span>
          <span>
            <span className="muted">{formatBytes(entry.size)} </span>
            {onEdit && (
              <button type="button" onClick={onEdit}>
                {t('files.edit')}
              </button>
            )}
            <a
              className="button"
              href={withBase(rawUrl(path, false))}
              download={entry.name}
              onClick={(e) => {
                e.preventDefault();
                download();
              }}
            >
              {t('files.download')}
            </a>
          </span>
        </div>
      )}
    </Dialog>
  );
}

/** The first TEXT_MAX bytes as text: fetched, or read from the decrypted `blob` of an encrypted file. */
function TextPreview({ entry, path, blob }: { entry: Entry; path: string; blob?: Blob }) {
  const { t } = useI18n();
  const [text, setText] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const ctrl = new AbortController();
    setText(null);
    (blob
      ? Promise.resolve(new Response(blob.slice(0, TEXT_MAX)))
      : fetchSigned(rawUrl(path), { headers: { Range: `bytes=0-${TEXT_MAX - 1}` }, signal: ctrl.signal })
    )
      .then(async (r) => {
        if (!r.ok) throw await toApiError(r);
        setText(await r.text());
      })
      .catch((e) => !ctrl.signal.aborted && setError(errorText(e, t)));
    return () => ctrl.abort();
  }, [path, blob, t]);
  if (error)
    return (
      <p className="error" role="alert">
        {error}
      </p>
    );
  if (text === null) return <p aria-busy="true">{t('common.loading')}</p>;
  return (
    <>
      {entry.size > TEXT_MAX && <p className="hint">{t('preview.too_big')}</p>}
      {isMarkdown(entry.name) || isMermaidName(entry.name) ? (
        <Suspense fallback={<p aria-busy="true">{t('common.loading')}</p>}>
          {isMermaidName(entry.name) ? <MermaidView text={text} /> : <MarkdownView text={text} />}
        </Suspense>
      ) : (
        <pre className="code" tabIndex={0}>
          <code>
            <Code text={text} name={entry.name} />
          </code>
        </pre>
      )}
    </>
  );
}
