/**
 * The feature routers behind one middleware. Mounted one after another, every request walked each router
 * before its own (each one reading the host, the path and running every layer's regex: some 50 hops before the
 * raw-file route). Which routers have a route for a path is worked out once per path and remembered: a router
 * with no route for it would only have passed the request on, so it is not asked. Order and behaviour are
 * otherwise those of mounting `routes()` + `allowedMethods()` router by router.
 */
import type { Router } from '@koa/router';
import type { AppState, Mw } from './context';

/** Distinct paths remembered; past it the memo starts over (paths with parameters: ids, tokens). */
const MEMO_PATHS = 4096;
/** Longer paths are worked out each time: a client sending long random paths must not fill the memo's memory. */
const MEMO_PATH_CHARS = 256;

interface Entry {
  /** Lower-cased static prefix, or null when the router must always be asked (no prefix, or a parameter in it). */
  prefix: string | null;
  /** The router's layers: its routes have methods (its `use` middlewares run only around a route of its own). */
  stack: Array<{ methods: string[]; match(path: string): boolean }>;
  mw: Mw;
}

export function routerDispatch(routers: Array<Router<AppState>>): Mw {
  const entries: Entry[] = routers.map((r) => {
    const routes = r.routes() as unknown as Mw;
    const allowed = r.allowedMethods({ throw: false }) as unknown as Mw;
    const p = r.opts.prefix?.replace(/\/+$/, '');
    return {
      prefix: p && !p.includes(':') ? p.toLowerCase() : null,
      stack: r.stack,
      mw: (ctx, next) =>
        routes(ctx, async () => {
          await allowed(ctx, next);
        }),
    };
  });
  const memo = new Map<string, Entry[]>();
  /**
   * The routers to ask for `path`: those with a route matching it (whatever its method, so 405 and OPTIONS
   * answers keep every matched route). When none has one, the first router that mounting them in a row would
   * have asked still is, for its `allowedMethods` answer (501 to a method no router implements).
   */
  const askedFor = (path: string): Entry[] => {
    let asked = memo.get(path);
    if (asked) return asked;
    // Routers match case-insensitively by default; so does the prefix skip.
    const lower = path.toLowerCase();
    const reached = entries.filter(({ prefix }) => prefix === null || lower === prefix || lower.startsWith(prefix + '/'));
    asked = reached.filter((e) => e.stack.some((l) => l.methods.length > 0 && l.match(path)));
    if (!asked.length && reached.length) asked = [reached[0]];
    if (path.length <= MEMO_PATH_CHARS) {
      if (memo.size >= MEMO_PATHS) memo.clear();
      memo.set(path, asked);
    }
    return asked;
  };
  return (ctx, next) => {
    const asked = askedFor(ctx.path);
    const step = (i: number): Promise<void> => (i < asked.length ? Promise.resolve(asked[i].mw(ctx, () => step(i + 1))) : next());
    return step(0);
  };
}
