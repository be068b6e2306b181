/**
 * A folder's rows, loaded page by page in the background (keyset `cursor`
 * when the server offers one, `offset` otherwise) so the first rows show at
 * once and a 100,000-entry folder fills in while the person already scrolls.
 * A soft reload (realtime change) keeps the old rows on screen until the new
 * listing is complete, so nothing flickers or jumps.
 */
import { useCallback, useEffect, useRef, useState } from 'react';
import type { Entry, Listing, SortDir, SortKey } from '../api/types';
import { entryComparator, insertionIndex } from '../lib/natural-sort';
import { listFolder } from './file-api';

/** The first page comes quickly; later ones are larger (the server allows 5000) to save round trips. */
const FIRST_PAGE = 1000;
const PAGE = 5000;
const PUBLISH_MS = 400;

export interface ListingState {
  entries: Entry[];
  total: number;
  storage: Listing['storage'] | null;
  loading: boolean;
  complete: boolean;
  error: unknown;
}

const initial: ListingState = { entries: [], total: 0, storage: null, loading: true, complete: false, error: null };

export interface ListingApi extends ListingState {
  /** Re-reads the folder; `soft` keeps the current rows until the new ones are all in. */
  reload: (soft?: boolean) => void;
  /** Local edits shown before the server confirms them (a rename, a new folder, a delete). */
  removeNames: (names: Iterable<string>) => void;
  upsert: (e: Entry, oldName?: string) => void;
}

export function useListing(path: string, sort: SortKey, dir: SortDir): ListingApi {
  const [state, setState] = useState<ListingState>(initial);
  const run = useRef<AbortController | null>(null);

  const load = useCallback(
    async (soft: boolean) => {
      run.current?.abort();
      const ctrl = new AbortController();
      run.current = ctrl;
      if (!soft) setState({ ...initial });
      const rows: Entry[] = [];
      let cursor: string | null | undefined;
      let shownAt = 0;
      try {
        for (;;) {
          const limit = rows.length ? PAGE : FIRST_PAGE;
          const page = await listFolder({ path, sort, dir, limit, offset: cursor ? undefined : rows.length, cursor }, ctrl.signal);
          for (const e of page.entries) rows.push(e);
          const done = page.entries.length < limit || rows.length >= page.total;
          // Publishing re-renders (and re-indexes) every row: the first page at once, then a few times a second.
          const now = Date.now();
          if (done || (!soft && (shownAt === 0 || now - shownAt >= PUBLISH_MS))) {
            shownAt = now;
            setState({
              entries: done ? rows : rows.slice(),
              total: Math.max(page.total, rows.length),
              storage: page.storage ?? null,
              loading: !done,
              complete: done,
              error: null,
            });
          }
          if (done || ctrl.signal.aborted) return;
          cursor = page.next_cursor;
        }
      } catch (error) {
        if (ctrl.signal.aborted) return;
        setState((s) => ({ ...s, loading: false, error }));
      }
    },
    [path, sort, dir],
  );

  useEffect(() => {
    void load(false);
    return () => run.current?.abort();
  }, [load]);
  // A reload asked for by an older render (a realtime change's timer set before the folder changed)
  // must read the folder open now, never put the previous folder's rows back.
  const latest = useRef(load);
  latest.current = load;

  const removeNames = useCallback((names: Iterable<string>) => {
    const gone = new Set(names);
    setState((s) => {
      const entries = s.entries.filter((e) => !gone.has(e.name));
      return entries.length === s.entries.length ? s : { ...s, entries, total: s.total - (s.entries.length - entries.length) };
    });
  }, []);

  const upsert = useCallback(
    (e: Entry, oldName?: string) =>
      setState((s) => {
        const without = s.entries.filter((x) => x.name !== e.name && x.name !== oldName);
        const at = insertionIndex(without, e, entryComparator(sort, dir));
        const entries = [...without.slice(0, at), e, ...without.slice(at)];
        return { ...s, entries, total: s.total + (entries.length - s.entries.length) };
      }),
    [sort, dir],
  );

  return { ...state, reload: (soft = false) => void latest.current(soft), removeNames, upsert };
}
