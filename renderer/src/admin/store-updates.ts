/**
 * The "updates available" count shown on Admin → Apps: fetched once per admin
 * page, fetched again whenever the store pages change something (connect,
 * refresh, install, upgrade…). A store that is off or failing shows no count.
 */
import { useEffect, useState } from 'react';
import { storeApi } from './store-api';

const EVENT = 'filedock:store-changed';

/** Tells every count to fetch again. */
export function storeChanged(): void {
  window.dispatchEvent(new Event(EVENT));
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
    return () => {
      live = false;
      window.removeEventListener(EVENT, load);
    };
  }, []);
  return n;
}
