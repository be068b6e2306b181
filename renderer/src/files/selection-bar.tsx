/**
 * The phone's selection mode: once a long press (or a row's ⋯ button) has
 * picked a row, taps add or remove rows and this bar, fixed at the bottom,
 * acts on them. An action the selection does not allow (two rows to rename, a
 * read-only folder) is shown disabled, so the bar never reflows under a thumb.
 */
import { useI18n } from '../i18n';
import { ToolIcon, type ToolIconName } from '../ui/tool-icons';

/** What the selection allows: each action is present only when it applies. */
export interface SelectionActions {
  rename?: () => void;
  share?: () => void;
  move?: () => void;
  copy?: () => void;
  delete?: () => void;
  download?: () => void;
}

const ORDER: Array<{
  key: keyof SelectionActions;
  icon: ToolIconName;
  label: 'files.rename' | 'files.share' | 'files.move' | 'files.copy' | 'files.delete' | 'files.download';
}> = [
  { key: 'rename', icon: 'rename', label: 'files.rename' },
  { key: 'share', icon: 'share', label: 'files.share' },
  { key: 'move', icon: 'move', label: 'files.move' },
  { key: 'copy', icon: 'copy', label: 'files.copy' },
  { key: 'delete', icon: 'delete', label: 'files.delete' },
  { key: 'download', icon: 'download', label: 'files.download' },
];

export function SelectionBar({ count, actions, onClear }: { count: number; actions: SelectionActions; onClear: () => void }) {
  const { t } = useI18n();
  return (
    <div className="selection-bar" role="toolbar" aria-label={t('files.selection_actions')}>
      <div className="selection-head">
        <span aria-live="polite">{t('files.selected', { n: count })}</span>
        <button type="button" className="icon-btn" aria-label={t('files.clear_selection')} title={t('files.clear_selection')} onClick={onClear}>
          <ToolIcon name="close" />
        </button>
      </div>
      <div className="selection-actions">
        {ORDER.map(({ key, icon, label }) => (
          <button key={key} type="button" className={key === 'delete' ? 'danger' : undefined} disabled={!actions[key]} onClick={actions[key]}>
            <ToolIcon name={icon} size={20} />
            <span>{t(label)}</span>
          </button>
        ))}
      </div>
    </div>
  );
}
