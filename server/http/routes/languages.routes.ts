/**
 * The UI's languages (docs/app-store.md, "Language packs"): public, so the
 * sign-in page can offer them too. The built-in languages ship in the
 * renderer; an installed pack's UI strings are fetched when it is picked.
 */
import Router from '@koa/router';
import { AppError } from '../../errors';
import { LANGS, languagePacks } from '../../lib/i18n';
import type { AppState } from '../context';
import { routeDoc } from '../openapi/route-doc';

const doc = routeDoc('Meta', 'public');
const BUILT_IN: Record<(typeof LANGS)[number], string> = { en: 'English', tr: 'Türkçe' };

export function languagesRoutes(): Router<AppState> {
  const r = new Router<AppState>();
  r.get('/api/i18n/languages', doc({ summary: 'The UI languages: built in, then installed language packs' }), (ctx) => {
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = {
      languages: [
        ...LANGS.map((id) => ({ id, name: BUILT_IN[id], built_in: true, version: null })),
        ...languagePacks.list().map((p) => ({ id: p.id, name: p.name, built_in: false, version: p.version })),
      ],
    };
  });
  r.get('/api/i18n/languages/:id', doc({ summary: 'An installed language pack’s UI strings (keys it lacks show in English)' }), (ctx) => {
    const p = languagePacks.get(ctx.params.id);
    if (!p) throw new AppError('not_found', { path: `language ${ctx.params.id}` });
    // The version in the answer lets a cached copy tell an upgraded pack apart.
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = { id: p.id, name: p.name, version: p.version, strings: p.strings.ui };
  });
  return r;
}
