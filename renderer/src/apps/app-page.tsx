/** An app view in page placement (`/app/{plugin}/{view}?path=…`): the opening surface from `GET .../views/{plugin}/{view}`. */
import { useCallback, useEffect, useState } from 'react';
import { useI18n } from '../i18n';
import { navigate, usePathname } from '../lib/router';
import { parentPath, routeOf } from '../lib/ui-path';
import { errorText } from '../ui/toast';
import { actionsFor, openView } from './apps-api';
import { parseAppRoute } from './app-route';
import { pickLabel } from './surface/logic';
import type { SurfaceData } from './surface/types';
import { ViewBody, type OpenView } from './app-view';

export default function AppPage() {
  const { t, lang } = useI18n();
  const pathname = usePathname();
  const route = parseAppRoute(pathname, location.search);
  const [v, setV] = useState<OpenView | null>(null);
  const [error, setError] = useState<unknown>(null);
  const key = `${pathname}${location.search}`;
  // biome-ignore lint/correctness/useExhaustiveDependencies: The route's text is the dependency; `route` is a new object each render
  useEffect(() => {
    if (!route) return;
    let live = true;
    setV(null);
    setError(null);
    Promise.all([openView(route.plugin, route.view, route.paths[0]), actionsFor([]).catch(() => null)]).then(
      ([r, all]) => {
        if (!live) return;
        const row = all?.views.find((x) => x.plugin === route.plugin && x.id === route.view);
        setV({ ...route, surface: r.surface, placement: 'page', title: pickLabel(row?.label, lang) || route.view });
      },
      (e) => live && setError(e),
    );
    return () => {
      live = false;
    };
  }, [key, lang]);
  const [shown, setShown] = useState<SurfaceData | null>(null);
  const back = route?.paths[0] ? routeOf(parentPath(route.paths[0])) : '/files';
  // A job started without a new surface: back to the folder, where the ops panel (opened for it) follows it.
  const onJob = useCallback(
    (_op: string, next?: unknown) => {
      if (!next) navigate(back);
    },
    [back],
  );
  return (
    <section className="page app-page">
      <p>
        <a
          href={back}
          onClick={(e) => {
            e.preventDefault();
            navigate(back);
          }}
        >
          ← {t('apps.back')}
        </a>
      </p>
      {v && <h1>{shown?.title || v.surface.title || v.title}</h1>}
      {error ? (
        <p className="error" role="alert">
          {errorText(error, t)}
        </p>
      ) : null}
      {!v && !error && <p aria-busy="true">{t('common.loading')}</p>}
      {v && <ViewBody key={key} v={v} onJob={onJob} onSurface={setShown} />}
    </section>
  );
}
