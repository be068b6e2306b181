/**
 * The virtualised listing (list or grid). Only the rows in view are in the DOM,
 * so 100,000 entries scroll as smoothly as 100. It is one ARIA listbox: focus
 * stays on the container and `aria-activedescendant` names the focused row, the
 * pattern that survives rows being recycled while scrolling.
 */
import { useEffect, useLayoutEffect, useMemo, useRef, useState, type DragEvent, type KeyboardEvent, type MouseEvent } from 'react';
import type { Entry, SortDir, SortKey } from '../api/types';
import { useI18n } from '../i18n';
import { formatBytes, formatDate } from '../lib/format';
import { columnsFor, scrollToReveal, visibleWindow, type Layout } from '../lib/virtual';
import type { Selection } from './selection';
import { FileIcon } from './icons';
import { ROWS_MIME } from './drag';
import { SignedImg } from '../device/signed-src';
import { FileMarks } from '../apps/file-marks';
import { TileThumb } from './tile-thumb';
import { ToolIcon } from '../ui/tool-icons';
import { isCoarsePointer, useLongPress } from './long-press';
import { snippetParts } from './snippet';
import { LockMark } from '../vault/lock-mark';

export type ViewMode = 'list' | 'grid';
const ROW = 40;
const TILE_W = 150;
const TILE_H = 170;

interface Props {
  entries: Entry[];
  /** Rows the server reported; the tail beyond `entries` is still loading. */
  total: number;
  view: ViewMode;
  selection: Selection;
  sort: SortKey;
  dir: SortDir;
  label: string;
  /** Search results show where each match lives. */
  showLocation?: boolean;
  onSort: (k: SortKey) => void;
  onRowClick: (e: Entry, ev: MouseEvent) => void;
  onOpen: (e: Entry) => void;
  onContextMenu: (e: Entry | null, x: number, y: number) => void;
  onKeyDown: (ev: KeyboardEvent, columns: number, pageRows: number) => void;
  /** Rows can be dragged (a writable folder); the handler puts the dragged paths on the drag. */
  onRowDragStart?: (e: Entry, ev: DragEvent) => void;
  /** Rows dragged from the listing were dropped on the folder row `e`. */
  onDropInto?: (e: Entry, ev: DragEvent) => void;
  /** A touch held on a row (the phone's selection mode starts). */
  onLongPress?: (e: Entry) => void;
  /** The row's ⋯ button (phones): act on this row. */
  onRowMore?: (e: Entry) => void;
}

/** Selection key of a row: the name within a folder, the full path for search matches (names may repeat). */
export const keyOf = (e: Entry): string => e.path ?? e.name;

export const rowId = (name: string) => `row-${encodeURIComponent(name).replace(/[^\w-]/g, '_')}`;

export function FileList(p: Props) {
  const { t, lang } = useI18n();
  const scroller = useRef<HTMLDivElement>(null);
  const [size, setSize] = useState({ w: 800, h: 600 });
  const [top, setTop] = useState(0);
  const [over, setOver] = useState<string | null>(null);
  const press = useLongPress<Entry>((e) => p.onLongPress?.(e));

  useLayoutEffect(() => {
    const el = scroller.current!;
    const ro = new ResizeObserver(() => setSize({ w: el.clientWidth, h: el.clientHeight }));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);

  const columns = p.view === 'grid' ? columnsFor(size.w, TILE_W) : 1;
  const layout: Layout = { count: p.total, rowHeight: p.view === 'grid' ? TILE_H : ROW, columns };
  const win = visibleWindow(layout, top, size.h);
  // Scrolling re-renders every frame: the O(n) lookup runs only when the focus or the rows change.
  const focusIndex = useMemo(
    () => (p.selection.focus === null ? -1 : p.entries.findIndex((e) => keyOf(e) === p.selection.focus)),
    [p.entries, p.selection.focus],
  );

  // biome-ignore lint/correctness/useExhaustiveDependencies: Only a focus move should scroll, never a resize or a page arriving
  useEffect(() => {
    if (focusIndex < 0) return;
    const el = scroller.current!;
    const next = scrollToReveal(layout, focusIndex, el.scrollTop, el.clientHeight);
    if (next !== null) el.scrollTop = next;
  }, [focusIndex]);

  const header = (k: SortKey, label: string, cls: string) => (
    <div className={cls}>
      <button type="button" className="sort-btn" aria-pressed={p.sort === k} onClick={() => p.onSort(k)}>
        {label}
        {p.sort === k && <span aria-hidden="true">{p.dir === 'asc' ? ' ▲' : ' ▼'}</span>}
        {p.sort === k && <span className="sr-only">{`, ${t(`files.sort.${p.dir}`)}`}</span>}
      </button>
    </div>
  );

  const rows = [];
  for (let i = win.start; i < win.end; i++) {
    const e = p.entries[i];
    if (!e) {
      rows.push(<div key={`ph${i}`} className={p.view === 'grid' ? 'tile placeholder' : 'row placeholder'} aria-hidden="true" />);
      continue;
    }
    const selected = p.selection.selected.has(keyOf(e));
    const focused = p.selection.focus === keyOf(e);
    const accepts = e.type === 'dir' && !!p.onDropInto && !selected;
    const dropProps = accepts
      ? {
          onDragOver: (ev: DragEvent) => {
            if (!ev.dataTransfer.types.includes(ROWS_MIME)) return;
            ev.preventDefault();
            ev.stopPropagation();
            ev.dataTransfer.dropEffect = 'move';
            setOver(keyOf(e));
          },
          onDragLeave: () => setOver(null),
          onDrop: (ev: DragEvent) => {
            setOver(null);
            if (!ev.dataTransfer.types.includes(ROWS_MIME)) return;
            ev.preventDefault();
            ev.stopPropagation();
            p.onDropInto!(e, ev);
          },
        }
      : {};
    // The row's ⋯ is a touch shortcut to the menu that long-press, the context-menu key and the selection bar also
    // open. An option may not hold a control (axe: nested-interactive), so it is a tappable span hidden from the tree.
    rows.push(
      <div
        key={keyOf(e)}
        id={rowId(keyOf(e))}
        role="option"
        aria-selected={selected}
        aria-posinset={i + 1}
        aria-setsize={p.total}
        className={`${p.view === 'grid' ? 'tile' : 'row'}${selected ? ' selected' : ''}${focused ? ' focused' : ''}${over === keyOf(e) ? ' drop-target' : ''}`}
        draggable={!!p.onRowDragStart}
        onDragStart={p.onRowDragStart ? (ev) => p.onRowDragStart!(e, ev) : undefined}
        onDragEnd={() => setOver(null)}
        {...dropProps}
        onTouchStart={p.onLongPress ? (ev) => press.start(e, ev) : undefined}
        onTouchMove={p.onLongPress ? press.move : undefined}
        onTouchEnd={p.onLongPress ? press.end : undefined}
        onTouchCancel={p.onLongPress ? press.cancel : undefined}
        onClick={(ev) => !press.swallowClick() && p.onRowClick(e, ev)}
        onDoubleClick={() => !isCoarsePointer() && p.onOpen(e)}
        onContextMenu={(ev) => {
          ev.preventDefault();
          ev.stopPropagation();
          if (!press.contextMenu()) p.onContextMenu(e, ev.clientX, ev.clientY);
        }}
        title={e.path ?? e.name}
      >
        {p.view === 'grid' ? (
          <>
            <TileThumb e={e} />
            <span className="tile-name">
              <LockMark e={e} />
              {e.name}
              <FileMarks e={e} />
            </span>
            {p.onRowMore && (
              <span
                className="button row-more phone-only icon-btn"
                aria-hidden="true"
                aria-label={t('files.row_actions', { name: e.name })}
                onTouchStart={(ev) => ev.stopPropagation()}
                onClick={(ev) => {
                  ev.stopPropagation();
                  p.onRowMore!(e);
                }}
              >
                <ToolIcon name="more" />
              </span>
            )}
          </>
        ) : (
          <>
            <span className="c-name">
              {e.thumb_url && e.is_image ? (
                <SignedImg className="mini" src={e.thumb_url} alt="" loading="lazy" onError={(ev) => (ev.currentTarget.style.display = 'none')} />
              ) : (
                <FileIcon entry={e} />
              )}
              <LockMark e={e} />
              {e.snippet ? (
                <span className="name-stack">
                  <span className="name-text">{e.name}</span>
                  <Snippet text={e.snippet} />
                </span>
              ) : (
                <span className="name-text">{e.name}</span>
              )}
              <FileMarks e={e} />
            </span>
            {p.showLocation && <span className="c-loc">{e.path ? e.path.slice(0, e.path.lastIndexOf('/')) || '/' : ''}</span>}
            <span className="c-size">{e.type === 'dir' ? '' : formatBytes(e.size)}</span>
            <span className="c-date">{formatDate(e.modified, lang)}</span>
            {p.onRowMore && (
              <span
                className="button row-more phone-only icon-btn"
                aria-hidden="true"
                aria-label={t('files.row_actions', { name: e.name })}
                onTouchStart={(ev) => ev.stopPropagation()}
                onClick={(ev) => {
                  ev.stopPropagation();
                  p.onRowMore!(e);
                }}
              >
                <ToolIcon name="more" />
              </span>
            )}
          </>
        )}
      </div>,
    );
  }

  return (
    <div className="list-wrap">
      {p.view === 'list' && (
        // Sort buttons, not a table header: the rows are a listbox's options, not a grid's rows.
        <div className="row head" role="group" aria-label={t('files.sort')}>
          {header('name', t('files.name'), 'c-name')}
          {p.showLocation && <div className="c-loc">{t('search.location')}</div>}
          {header('size', t('files.size'), 'c-size')}
          {header('modified', t('files.modified'), 'c-date')}
          {p.onRowMore && <div className="row-more phone-only" aria-hidden="true" />}
        </div>
      )}
      <div
        ref={scroller}
        className={`scroller ${p.view}`}
        role="listbox"
        tabIndex={0}
        aria-multiselectable="true"
        aria-label={p.label}
        aria-activedescendant={p.selection.focus !== null && focusIndex >= win.start && focusIndex < win.end ? rowId(p.selection.focus) : undefined}
        onScroll={(ev) => setTop(ev.currentTarget.scrollTop)}
        onKeyDown={(ev) => p.onKeyDown(ev, columns, Math.max(1, Math.floor(size.h / layout.rowHeight)) * columns)}
        onContextMenu={(ev) => {
          ev.preventDefault();
          p.onContextMenu(null, ev.clientX, ev.clientY);
        }}
        data-testid="file-list"
      >
        <div style={{ height: win.total, position: 'relative' }}>
          <div
            className={p.view === 'grid' ? 'grid-window' : 'list-window'}
            style={{ transform: `translateY(${win.offset}px)`, gridTemplateColumns: p.view === 'grid' ? `repeat(${columns}, 1fr)` : undefined }}
          >
            {rows}
          </div>
        </div>
      </div>
    </div>
  );
}

/** A content match's text under its name, the hits highlighted (all of it rendered as text). */
function Snippet({ text }: { text: string }) {
  return (
    <span className="snippet">
      {snippetParts(text).map((p, i) =>
        // The runs never move: their index is their identity.
        // biome-ignore lint/suspicious/noArrayIndexKey: a fixed list of text runs
        p.hit ? <mark key={i}>{p.text}</mark> : <span key={i}>{p.text}</span>,
      )}
    </span>
  );
}
