/**
 * The file manager's action toolbar: uploads, new items, the selection's
 * actions (always rendered, disabled when they do not apply, so selecting never
 * reflows it under the pointer), apps, sort, view and the assistant. Phones see
 * upload and a "More" menu; the rest is `wide-only`.
 */
import type { RefObject } from 'react';
import type { SortDir, SortKey } from '../api/types';
import { useI18n } from '../i18n';
import { linkClick } from '../lib/router';
import { withBase } from '../lib/base';
import { ToolIcon } from '../ui/tool-icons';
import { fromInput, type Picked } from '../upload/drop';
import type { ViewMode } from './file-list';
import type { SelectionActions } from './selection-bar';

export interface ActionsBarProps {
  readOnly: boolean;
  uploadInput: RefObject<HTMLInputElement | null>;
  onUpload(picked: Picked): void;
  onDialog(kind: 'mkdir' | 'newtext' | 'newdoc' | 'shortcuts'): void;
  /** An encrypted folder: no server-made documents (the server refuses them). */
  encrypted?: boolean;
  hasNewDoc: boolean;
  act: SelectionActions;
  /** One file chosen: Download fetches it, not a ZIP. */
  oneFile: boolean;
  apps: { shown: boolean; count: number; open(x: number, y: number): void };
  onMore(x: number, y: number): void;
  onRefresh(): void;
  sort: SortKey;
  dir: SortDir;
  onSort(k: SortKey, d: SortDir): void;
  view: ViewMode;
  onView(v: ViewMode): void;
  assistant: { button: boolean; setup: boolean; open: boolean; toggle(): void; ref: RefObject<HTMLButtonElement | null> };
}

export function ActionsBar({
  readOnly,
  encrypted,
  uploadInput,
  onUpload,
  onDialog,
  hasNewDoc,
  act,
  oneFile,
  apps,
  onMore,
  onRefresh,
  sort,
  dir,
  onSort,
  view,
  onView,
  assistant,
}: ActionsBarProps) {
  const { t } = useI18n();
  return (
    <div className="toolbar actions-bar">
      <label className={`button${readOnly ? ' disabled' : ''}`} title={t('files.upload')}>
        <ToolIcon name="upload" />
        <span className="phone-sr">{t('files.upload')}</span>
        <input
          ref={uploadInput}
          type="file"
          multiple
          className="sr-only"
          disabled={readOnly}
          onChange={(e) => {
            if (e.target.files) onUpload(fromInput(e.target.files));
            e.target.value = '';
          }}
        />
      </label>
      <label className={`button wide-only${readOnly ? ' disabled' : ''}`}>
        <ToolIcon name="upload-folder" />
        {t('files.upload_folder')}
        <input
          type="file"
          className="sr-only"
          disabled={readOnly}
          {...{ webkitdirectory: '' }}
          onChange={(e) => {
            if (e.target.files) onUpload(fromInput(e.target.files));
            e.target.value = '';
          }}
        />
      </label>
      <button type="button" className="wide-only" disabled={readOnly} onClick={() => onDialog('mkdir')}>
        <ToolIcon name="new-folder" />
        {t('files.new_folder')}
      </button>
      <button type="button" className="wide-only" disabled={readOnly || encrypted} onClick={() => onDialog('newtext')}>
        <ToolIcon name="new-file" />
        {t('files.new_text')}
      </button>
      {hasNewDoc && (
        <button type="button" className="wide-only" disabled={readOnly || encrypted} onClick={() => onDialog('newdoc')}>
          <ToolIcon name="new-file" />
          {t('newdoc.title')}
        </button>
      )}
      {/* Always rendered (disabled when they do not apply) so selecting never reflows the toolbar under the pointer. */}
      <span className="sep" aria-hidden="true" />
      <button type="button" className="wide-only" disabled={!act.download} title={oneFile ? undefined : t('files.download_zip')} onClick={act.download}>
        <ToolIcon name="download" />
        {t('files.download')}
      </button>
      <button type="button" className="wide-only" disabled={!act.share} onClick={act.share}>
        <ToolIcon name="share" />
        {t('files.share')}
      </button>
      <button type="button" className="wide-only" disabled={!act.move} onClick={act.move}>
        <ToolIcon name="move" />
        {t('files.move')}
      </button>
      <button type="button" className="wide-only" disabled={!act.copy} onClick={act.copy}>
        <ToolIcon name="copy" />
        {t('files.copy')}
      </button>
      <button type="button" className="danger wide-only" disabled={!act.delete} onClick={act.delete}>
        <ToolIcon name="delete" />
        {t('files.delete')}
      </button>
      {apps.shown && (
        <button
          type="button"
          className="wide-only"
          aria-haspopup="menu"
          disabled={!apps.count}
          title={apps.count ? undefined : t('apps.none')}
          onClick={(ev) => {
            const r = ev.currentTarget.getBoundingClientRect();
            apps.open(r.left, r.bottom + 4);
          }}
        >
          {t('apps.menu')} ▾
        </button>
      )}
      {/* Phones: the actions above fold into this menu (the selection's actions, or the folder's). */}
      <button
        type="button"
        className="phone-only"
        aria-haspopup="menu"
        onClick={(ev) => {
          const r = ev.currentTarget.getBoundingClientRect();
          onMore(r.left, r.bottom + 4);
        }}
      >
        <ToolIcon name="more" />
        <span className="phone-sr">{t('files.more')}</span>
      </button>
      <span className="grow" />
      <button type="button" className="icon-btn wide-only" aria-label={t('files.refresh')} title={t('files.refresh')} onClick={onRefresh}>
        ⟳
      </button>
      <label className="inline wide-only">
        <span className="sr-only">{t('files.sort')}</span>
        <select
          aria-label={t('files.sort')}
          value={`${sort}:${dir}`}
          onChange={(e) => {
            const [k, d] = e.target.value.split(':') as [SortKey, SortDir];
            onSort(k, d);
          }}
        >
          {(['name', 'size', 'modified'] as SortKey[]).flatMap((k) =>
            (['asc', 'desc'] as SortDir[]).map((d) => (
              <option key={`${k}:${d}`} value={`${k}:${d}`}>
                {t(`files.${k}`)} · {t(`files.sort.${d}`)}
              </option>
            )),
          )}
        </select>
      </label>
      <div className="seg wide-only" role="group" aria-label={t('files.view.list')}>
        <button type="button" aria-pressed={view === 'list'} aria-label={t('files.view.list')} title={t('files.view.list')} onClick={() => onView('list')}>
          ☰
        </button>
        <button type="button" aria-pressed={view === 'grid'} aria-label={t('files.view.grid')} title={t('files.view.grid')} onClick={() => onView('grid')}>
          ▦
        </button>
      </div>
      {assistant.button && (
        <button type="button" ref={assistant.ref} aria-expanded={assistant.open} onClick={assistant.toggle}>
          {t('assistant.button')}
        </button>
      )}
      {assistant.setup && (
        <a className="button wide-only" href={withBase('/admin/assistant')} onClick={linkClick} title={t('assistant.setup_hint')}>
          {t('assistant.setup')}
        </a>
      )}
      <button type="button" className="icon-btn wide-only" aria-label={t('files.shortcuts')} title={t('files.shortcuts')} onClick={() => onDialog('shortcuts')}>
        ?
      </button>
    </div>
  );
}
