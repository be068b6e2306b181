/**
 * Windowing math for long listings (100,000 rows stay smooth because only the
 * rows in view, plus a small overscan, are ever in the DOM). Pure so it can be
 * tested under Node; `files/virtual-list.tsx` feeds it scroll events.
 */
export interface Layout {
  /** Number of items. */
  count: number;
  /** Height of one row in px (a grid row holds `columns` items). */
  rowHeight: number;
  /** Items per row: 1 for the list view. */
  columns: number;
}

export interface Window {
  /** First item index rendered (inclusive). */
  start: number;
  /** Last item index rendered (exclusive). */
  end: number;
  /** Pixel offset of the first rendered row. */
  offset: number;
  /** Height of the whole scrollable content. */
  total: number;
}

/** Columns that fit `width` for tiles of `minTile` px, never fewer than one. */
export function columnsFor(width: number, minTile: number): number {
  return Math.max(1, Math.floor(width / minTile));
}

/** The slice of items to render for a viewport at `scrollTop` of height `viewport`. */
export function visibleWindow(layout: Layout, scrollTop: number, viewport: number, overscanRows = 4): Window {
  const { count, rowHeight, columns } = layout;
  const rows = Math.ceil(count / columns);
  const total = rows * rowHeight;
  if (count === 0 || rowHeight <= 0) return { start: 0, end: 0, offset: 0, total: 0 };
  const top = Math.min(Math.max(0, scrollTop), Math.max(0, total - viewport));
  const firstRow = Math.max(0, Math.floor(top / rowHeight) - overscanRows);
  const lastRow = Math.min(rows, Math.ceil((top + viewport) / rowHeight) + overscanRows);
  return { start: firstRow * columns, end: Math.min(count, lastRow * columns), offset: firstRow * rowHeight, total };
}

/**
 * The scrollTop that brings item `index` fully into view, or null when it already is
 * (so keyboard navigation scrolls only when the focus would leave the viewport).
 */
export function scrollToReveal(layout: Layout, index: number, scrollTop: number, viewport: number): number | null {
  const row = Math.floor(index / layout.columns);
  const top = row * layout.rowHeight;
  const bottom = top + layout.rowHeight;
  if (top < scrollTop) return top;
  if (bottom > scrollTop + viewport) return Math.max(0, bottom - viewport);
  return null;
}
