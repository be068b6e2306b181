/**
 * Host methods for public app pages (docs/app-plugins.md, "Public app pages"):
 * `pages.create {paths, page, title?, pin?, expires_at?, max_visits?}` →
 * `{token, url, share_id}` and `pages.revoke {token | share_id}` →
 * `{revoked, share_id}`. Both need the manifest permission `public_pages`;
 * the acting person must be allowed to share those files (editor, as for any
 * link) and becomes the link's creator. Kept apart from host-api.ts, which
 * merges these in through `HostDeps.pages`.
 */
import type { Actor } from '../../auth';
import { AppError } from '../../errors';
import type { AppPages } from '../public/pages';
import type { InstalledApp } from '../registry/apps.repo';
import type { HostApi } from '../sandbox/sandbox';

const obj = (v: unknown) => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

/** The `pages.*` methods of one call, for `app` acting as `actor`. */
export function pagesHostApi(pages: AppPages, app: InstalledApp, actor: Actor): HostApi {
  const needs = () => {
    if (!app.manifest.permissions.includes('public_pages'))
      throw new AppError(
        'app_host_refused',
        { plugin: app.id, reason: 'the app did not declare the public_pages permission' },
        { reason: 'the app did not declare the public_pages permission' },
      );
  };
  return {
    'pages.create': async (a) => {
      needs();
      return pages.create(app, actor, obj(a));
    },
    'pages.revoke': async (a) => {
      needs();
      return pages.revoke(app, actor, obj(a));
    },
  };
}
