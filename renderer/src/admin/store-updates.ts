/**
 * The "updates available" count shown on Admin → Apps: fetched once per admin
 * page, fetched again whenever the store pages change something (connect,
 * refresh, install, upgrade…) and when the bell rings for an update (the
 * realtime stream's `notification` frame, so a daily check or another admin's
 * refresh shows without a reload). A store that is off or failing shows no count.
 */
import { useEffect, useState } from 'react';
import { openEventStream } from '../device/event-stream';
import { storeApi } from './store-api';

const EVENT = 'filedock:store-changed';
/** Told when the bell rang for a store update: the catalogue on screen reads itself again. */
const NOTICE_EVENT = 'filedock:store-update-notice';
/** The bell's event for a newer version in a store (docs/app-store.md, "Updates"). */
const UPDATE_NOTICE = 'app_store.update_available';

/** Tells every count to fetch again. */
export function storeChanged(): void {
  window.dispatchEvent(new Event(EVENT));
}

/** Calls `fn` whenever the bell rang for a store update (the console's count hears it and passes it on). */
export function onStoreNotice(fn: () => void): () => void {
  window.addEventListener(NOTICE_EVENT, fn);
  return () => window.removeEventListener(NOTICE_EVENT, fn);
}

/** Calls `fn` whenever the bell rings for a store update; returns the stream's close. */
function onUpdateNotices(fn: () => void): () => void {
  if (typeof EventSource === 'undefined') return () => {};
  const es = openEventStream('/api/events/stream');
  es.addEventListener('notification', (ev) => {
    try {
      if ((JSON.parse((ev as MessageEvent<string>).data) as { event?: string }).event === UPDATE_NOTICE) fn();
    } catch {
      // Not a notification this count reads.
    }
  });
  return () => es.close();
}

export function useStoreUpdates(): number {
  const [n, setN] = useState(0);
  useEffect(() => {
    let live = true;
    const load = () =>
      void storeApi.updates().then(
        (total) => live && setN(total),
        () => live && setN(0),
      );
    load();
    window.addEventListener(EVENT, load);
    const close = onUpdateNotices(() => {
      load();
      window.dispatchEvent(new Event(NOTICE_EVENT));
    });
    return () => {
      live = false;
      window.removeEventListener(EVENT, load);
      close();
    };
  }, []);
  return n;
}
