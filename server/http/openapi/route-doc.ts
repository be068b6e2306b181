/**
 * A route's description, given where the route is defined: `routeDoc(tag, auth)`
 * returns `doc`, and `r.post('/x', doc({ summary, body: schema }), requireUser, handler)`
 * puts a pass-through middleware first in the route's chain that carries it.
 * The generator (document.ts) finds it in the router's layer, so the path and
 * method are the router's own and the schemas are the objects the handler
 * validates with: nothing is written twice, nothing can drift.
 */
import type { z } from 'zod';
import type { Mw } from '../context';

/**
 * Who may call a route: `public` (no sign-in), `user` or `admin` (session cookie or
 * bearer token), `signed` (a signature or token the server issued rides in the query or header).
 */
export type RouteAuth = 'public' | 'user' | 'admin' | 'signed';

export interface RouteDoc {
  /** One line: what the route does. */
  summary: string;
  /** Longer notes (markdown) when the summary is not enough. */
  description?: string;
  /** Overrides the file's tag. */
  tag?: string;
  /** Overrides the file's default. */
  auth?: RouteAuth;
  /** Path parameters (strings when absent). */
  params?: z.ZodType;
  query?: z.ZodType;
  /** The JSON body (or the form fields of `consumes`). */
  body?: z.ZodType;
  /** Body media type when not JSON: `application/octet-stream` for raw bytes, `multipart/form-data`. */
  consumes?: string;
  /** Main success status (200 when absent). */
  status?: number;
  /** Success media types (`application/json` when absent; `[]` for an empty answer). */
  produces?: string[];
  deprecated?: boolean;
}

export type FullDoc = RouteDoc & { tag: string; auth: RouteAuth };

const docs = new WeakMap<Mw, FullDoc>();

/** The description a middleware carries, or undefined for any other middleware. */
export const docOf = (mw: unknown): FullDoc | undefined => (typeof mw === 'function' ? docs.get(mw as Mw) : undefined);

/** A describer for one route file: its tag and the auth its routes have unless one says otherwise. */
export function routeDoc(tag: string, auth: RouteAuth): (d: RouteDoc) => Mw {
  return (d) => {
    const mw: Mw = (_ctx, next) => next();
    docs.set(mw, { tag, auth, ...d });
    return mw;
  };
}
