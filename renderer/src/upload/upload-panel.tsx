/**
 * Upload progress: one bar per file and one for the total, with pause, resume and cancel. An upload
 * restored after a reload asks for its file again; an encrypted one goes through the vault to resume.
 */
import { useEffect, useState } from 'react';
import { useI18n, type MessageKey, type Translate } from '../i18n';
import { formatBytes } from '../lib/format';
import { NotThatFile, resumeEncrypted } from '../vault/vault-files';
import { isCancelled, vaultErrorText } from '../vault/vault-words';
import type { UploadView } from './upload-queue';
import { uploads, useUploads } from './uploads';

export function UploadPanel() {
  const { t } = useI18n();
  useUploads();
  const [open, setOpen] = useState(true);
  // Why a file picked for an encrypted upload was refused, by upload.
  const [refused, setRefused] = useState<Record<string, string>>({});
  const list = uploads.list();
  // Finished uploads fold to one line, so the panel stops covering the list's Size and Modified columns.
  const finished = list.length > 0 && list.every((u) => u.state === 'done' || u.state === 'cancelled');
  useEffect(() => setOpen(!finished), [finished]);
  if (!list.length) return null;
  const tot = uploads.totals();
  const pick = (u: UploadView, file: File) => {
    if (!u.vault) return void uploads.attach(u.key, file);
    const why = (text: string | null) => setRefused(({ [u.key]: _, ...rest }) => (text ? { ...rest, [u.key]: text } : rest));
    why(null);
    resumeEncrypted(u.key, u.vault, u.path, file).catch((e) => why(refusal(e, t)));
  };
  return (
    <section className="panel uploads" aria-label={t('upload.title')} data-testid="uploads">
      <button type="button" className="panel-head" aria-expanded={open} onClick={() => setOpen(!open)}>
        {t('upload.title')} · {t('upload.total', { done: formatBytes(tot.sent), total: formatBytes(tot.total) })}
      </button>
      <progress max={Math.max(1, tot.total)} value={tot.sent} aria-label={t('upload.title')} />
      {open && (
        <>
          <ul>
            {list.map((u) => (
              <li key={u.key} data-state={u.state}>
                <div className="line">
                  <span className="name-text" title={u.vault ? undefined : u.path}>
                    {u.vault ? t('upload.encrypted_file') : u.name}
                  </span>
                  <span className="muted">{t(`upload.state.${u.state}` as MessageKey)}</span>
                  {['uploading', 'queued', 'offline'].includes(u.state) && (
                    <button type="button" className="icon-btn" aria-label={`${t('upload.pause')} ${u.name}`} onClick={() => uploads.pause(u.key)}>
                      <Glyph d="M6 5h4v14H6zM14 5h4v14h-4z" />
                    </button>
                  )}
                  {['paused', 'error'].includes(u.state) && (
                    <button type="button" className="icon-btn" aria-label={`${t('upload.resume')} ${u.name}`} onClick={() => uploads.resume(u.key)}>
                      <Glyph d="M7 5l12 7-12 7z" />
                    </button>
                  )}
                  {u.state === 'needs_file' && (
                    <label className="button small">
                      {t('upload.resume_pick')}
                      <input
                        type="file"
                        className="sr-only"
                        onChange={(e) => {
                          const file = e.target.files?.[0];
                          // Cleared, so the same file picked again after a refusal is seen again.
                          e.target.value = '';
                          if (file) pick(u, file);
                        }}
                      />
                    </label>
                  )}
                  {!['done', 'cancelled'].includes(u.state) && (
                    <button type="button" className="icon-btn" aria-label={`${t('upload.cancel')} ${u.name}`} onClick={() => uploads.cancel(u.key)}>
                      ✕
                    </button>
                  )}
                </div>
                <progress max={Math.max(1, u.size)} value={u.sent} aria-label={u.name} />
                {u.error && <p className="error">{u.error}</p>}
                {u.state === 'needs_file' && refused[u.key] && (
                  <p className="error" role="alert">
                    {refused[u.key]}
                  </p>
                )}
              </li>
            ))}
          </ul>
        </>
      )}
      <button type="button" className="small" onClick={() => uploads.clearFinished()}>
        {t('upload.clear')}
      </button>
    </section>
  );
}

/** Why a picked file did not resume an encrypted upload; null when the person closed the unlock dialog. */
function refusal(e: unknown, t: Translate): string | null {
  if (isCancelled(e)) return null;
  return e instanceof NotThatFile ? t('upload.not_that_file') : vaultErrorText(e, t);
}

/** Pause/play drawn as SVG: the Unicode media symbols are missing from many fonts. */
function Glyph({ d }: { d: string }) {
  return (
    <svg width="14" height="14" viewBox="0 0 24 24" aria-hidden="true">
      <path fill="currentColor" d={d} />
    </svg>
  );
}
