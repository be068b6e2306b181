/**
 * The feature routers behind one middleware. Mounted one after another, every request walked each router
 * before its own (each one reading the host, the path and running its regexes: some 50 hops before the raw-file
 * route); a router with a static prefix is now passed over by a string compare when the path lies outside it.
 * Order and behaviour are otherwise those of mounting `routes()` + `allowedMethods()` router by router.
 */
import type { Router } from '@koa/router';
import type { AppState, Mw } from './context';

interface Entry {
  /** Lower-cased static prefix, or null when the router must always be asked (no prefix, or a parameter in it). */
  prefix: string | null;
  mw: Mw;
}

export function routerDispatch(routers: Array<Router<AppState>>): Mw {
  const entries: Entry[] = routers.map((r) => {
    const routes = r.routes() as unknown as Mw;
    const allowed = r.allowedMethods({ throw: false }) as unknown as Mw;
    const p = r.opts.prefix?.replace(/\/+$/, '');
    return {
      prefix: p && !p.includes(':') ? p.toLowerCase() : null,
      mw: (ctx, next) =>
        routes(ctx, async () => {
          await allowed(ctx, next);
        }),
    };
  });
  return (ctx, next) => {
    // Routers match case-insensitively by default; so does the skip.
    const path = ctx.path.toLowerCase();
    const step = (i: number): Promise<void> => {
      for (; i < entries.length; i++) {
        const { prefix, mw } = entries[i];
        if (prefix === null || path === prefix || path.startsWith(prefix + '/')) return Promise.resolve(mw(ctx, () => step(i + 1)));
      }
      return next();
    };
    return step(0);
  };
}
