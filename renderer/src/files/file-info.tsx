/**
 * The info panel: what Open shows for a file that has no preview (a `.bin`,
 * a `.drawio` without a diagram editor, …) instead of downloading it silently.
 * Name, size, type and modified date, and what the person can do with it:
 * download it, show it as text anyway, or open it with an app that declared an
 * open rule for it. Shown inside the preview dialog (see preview.tsx).
 */
import type { Entry } from '../api/types';
import { useI18n } from '../i18n';
import { formatBytes, formatDate, extOf } from '../lib/format';
import { useCapabilities } from '../api/capabilities';
import { useAppActions } from '../apps/use-app-actions';
import { matchingRules, type OpenRule } from '../apps/apps-api';
import { pickLabel } from '../apps/surface/logic';
import { diagramFormat } from './diagram/diagram-route';
import { FileIcon } from './icons';

interface Props {
  entry: Entry;
  path: string;
  onDownload: () => void;
  onAsText: () => void;
  /** Runs an app's open rule on this file (the file manager's "Open with" path). */
  onOpenWith?: (rule: OpenRule) => void;
}

export function FileInfo({ entry, path, onDownload, onAsText, onOpenWith }: Props) {
  const { t, lang } = useI18n();
  const caps = useCapabilities();
  const apps = useAppActions([path], !!caps?.app_plugins?.enabled && !!onOpenWith);
  const rules = matchingRules(apps?.open_rules, entry.name, entry.mime);
  const ext = extOf(entry.name);
  // A plain .drawio needs the diagram editor; its image forms (.drawio.svg/.png) preview as images.
  const diagramWithoutEditor = diagramFormat(entry.name) === 'xml' && !caps?.external.diagram_url;
  return (
    <div className="file-info" data-testid="file-info">
      <div className="file-info-head">
        <FileIcon entry={entry} size={48} />
        <p>{t('info.no_preview')}</p>
      </div>
      {diagramWithoutEditor && (
        <p className="hint" role="note">
          {t('diagram.not_configured')}
        </p>
      )}
      <dl className="file-info-facts">
        <dt>{t('files.name')}</dt>
        <dd>{entry.name}</dd>
        <dt>{t('files.size')}</dt>
        <dd>
          {formatBytes(entry.size)} <span className="muted">({t('info.bytes', { n: entry.size.toLocaleString(lang) })})</span>
        </dd>
        <dt>{t('info.type')}</dt>
        <dd>
          {ext ? `${ext.toUpperCase()} · ` : ''}
          <span className="muted">{entry.mime || 'application/octet-stream'}</span>
        </dd>
        <dt>{t('files.modified')}</dt>
        <dd>{formatDate(entry.modified, lang)}</dd>
      </dl>
      <div className="file-info-actions">
        <button type="button" className="primary" data-autofocus onClick={onDownload}>
          {t('files.download')}
        </button>
        <div role="group" aria-label={t('info.open_with')}>
          <span className="muted">{t('info.open_with')}</span>
          <button type="button" onClick={onAsText}>
            {t('info.as_text')}
          </button>
          {rules.map((r) => (
            <button key={`${r.plugin}/${r.view ?? r.action}`} type="button" onClick={() => onOpenWith?.(r)}>
              {t('apps.open_with', { label: pickLabel(r.label, lang) })}
            </button>
          ))}
        </div>
      </div>
    </div>
  );
}
