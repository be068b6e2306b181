/**
 * Dragging rows of the listing onto a folder moves them. The dragged paths
 * travel in the DataTransfer under a type of our own, so a drop of files
 * from the desktop (type `Files`, an upload) is never mistaken for a move.
 */
export const ROWS_MIME = 'application/x-filedock-paths';

/** Puts the dragged UI paths on the drag. */
export function startRowDrag(dt: DataTransfer, paths: string[]): void {
  dt.setData(ROWS_MIME, JSON.stringify(paths));
  dt.setData('text/plain', paths.join('\n'));
  dt.effectAllowed = 'move';
}

/** The dragged UI paths of a drop; empty when the drag did not come from the listing. */
export function droppedPaths(dt: DataTransfer): string[] {
  try {
    const v = JSON.parse(dt.getData(ROWS_MIME) || '[]') as unknown;
    return Array.isArray(v) ? v.filter((p): p is string => typeof p === 'string') : [];
  } catch {
    return [];
  }
}
