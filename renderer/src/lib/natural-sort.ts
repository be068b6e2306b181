/**
 * Ordering of listing rows, matching the server's `sort`/`dir` so rows merged
 * in from realtime events land where a reload would put them: folders first,
 * names compared naturally ("file2" before "file10"), case-insensitively.
 */
import type { Entry, SortDir, SortKey } from '../api/types';

const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });

/** Natural, case-insensitive name comparison; ties broken by the exact string so the order is total. */
export function compareNames(a: string, b: string): number {
  return collator.compare(a, b) || (a < b ? -1 : a > b ? 1 : 0);
}

/** Comparator for entries: folders always first (in both directions), then `key`, then name. */
export function entryComparator(key: SortKey, dir: SortDir): (a: Entry, b: Entry) => number {
  const sign = dir === 'desc' ? -1 : 1;
  return (a, b) => {
    if (a.type !== b.type) return a.type === 'dir' ? -1 : 1;
    let c = 0;
    if (key === 'size') c = a.size - b.size;
    else if (key === 'modified') c = Date.parse(a.modified) - Date.parse(b.modified);
    return sign * (c || compareNames(a.name, b.name));
  };
}

/** Index where `item` belongs in `sorted` (binary search), for inserting one row without a re-sort. */
export function insertionIndex<T>(sorted: readonly T[], item: T, cmp: (a: T, b: T) => number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (cmp(sorted[mid], item) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
