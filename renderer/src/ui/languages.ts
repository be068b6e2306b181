/**
 * The languages the menu offers: the built-in ones at once, then the server's
 * list (built-in plus installed language packs, GET /api/i18n/languages,
 * public). Asked again each time the menu is about to open, so a pack an
 * admin has just installed appears without a reload.
 */
import { useCallback, useEffect, useState } from 'react';
import { LANGS } from '../i18n';

export interface Language {
  id: string;
  name: string;
}

const BUILT_IN: Language[] = Object.entries(LANGS).map(([id, name]) => ({ id, name }));

export function useLanguages(): { languages: Language[]; refresh: () => void } {
  const [languages, setLanguages] = useState<Language[]>(BUILT_IN);
  const refresh = useCallback(() => {
    fetch('/api/i18n/languages', { headers: { Accept: 'application/json' }, cache: 'no-cache' })
      .then((r) => (r.ok ? (r.json() as Promise<{ languages: Language[] }>) : null))
      .then((b) => b?.languages?.length && setLanguages(b.languages.map(({ id, name }) => ({ id, name }))))
      // An older server without the route, or none reachable: the built-in languages stay.
      .catch(() => {});
  }, []);
  useEffect(refresh, [refresh]);
  return { languages, refresh };
}
