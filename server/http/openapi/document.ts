/**
 * The OpenAPI 3.1 document of the feature routers, built from the descriptions
 * the routes carry (route-doc.ts) and the zod schemas they validate with
 * (zod's own JSON Schema, draft 2020-12, which OpenAPI 3.1 uses as it is).
 */
import { z } from 'zod';
import type { Router } from '@koa/router';
import { SESSION_COOKIE } from '../middlewares/auth';
import { keyRule } from '../middlewares/key-scope';
import type { AppState } from '../context';
import { docOf, type FullDoc } from './route-doc';

type Json = Record<string, unknown>;

/** One (method, path) the routers answer, the path in OpenAPI form (`/a/{id}`), with its description if it has one. */
export interface RouteEntry {
  method: string;
  path: string;
  doc?: FullDoc;
}

/** What an operation may be: `all` routes (the retired /p/ redirects) count once per method here. */
const METHODS = ['GET', 'PUT', 'POST', 'DELETE', 'PATCH'];

/** `:id` and `*rest` (path-to-regexp) as `{id}` and `{rest}`. */
const openApiPath = (path: string) => path.replace(/[:*]([A-Za-z0-9_]+)/g, '{$1}');

/**
 * Every (method, path) of the routers in dispatch order, once each (HEAD rides on GET). When two
 * routers answer the same pair (the app page before the link page at /s/{token}), the first
 * described layer's description stands.
 */
export function routeEntries(routers: ReadonlyArray<Router<AppState>>): RouteEntry[] {
  const seen = new Map<string, RouteEntry>();
  for (const router of routers) {
    for (const layer of router.stack) {
      if (typeof layer.path !== 'string') continue;
      const doc = layer.stack.map(docOf).find((d) => d !== undefined);
      for (const method of layer.methods.filter((m) => METHODS.includes(m))) {
        const path = openApiPath(layer.path);
        const key = `${method} ${path}`;
        const had = seen.get(key);
        if (!had) seen.set(key, { method, path, doc });
        else had.doc ??= doc;
      }
    }
  }
  return [...seen.values()];
}

/** JSON Schemas by zod schema, for one build (a schema several routes share is converted once; nothing is kept after). */
type Schemas = Map<z.ZodType, Json>;

/** The schema as a client sends it (before coercion and transforms). */
function jsonSchema(s: z.ZodType, seen: Schemas): Json {
  let j = seen.get(s);
  if (!j) {
    const { $schema: _, ...rest } = z.toJSONSchema(s, { io: 'input', unrepresentable: 'any' }) as Json;
    seen.set(s, (j = rest));
  }
  return j;
}

function parameters(seen: Schemas, where: 'path' | 'query', s: z.ZodType | undefined, names: string[] = []): Json[] {
  const j = s ? jsonSchema(s, seen) : {};
  const props = (j.properties ?? {}) as Record<string, Json>;
  const required = new Set((j.required ?? []) as string[]);
  const all = where === 'path' ? names : Object.keys(props);
  return all.map((name) => ({ name, in: where, required: where === 'path' || required.has(name), schema: props[name] ?? { type: 'string' } }));
}

const STATUS_TEXT: Record<number, string> = {
  200: 'OK',
  201: 'Created',
  202: 'Accepted',
  204: 'No content',
  301: 'Moved permanently',
  302: 'Found (redirect)',
  303: 'See other (redirect)',
};

function operation(e: RouteEntry & { doc: FullDoc }, seen: Schemas): Json {
  const d = e.doc;
  const status = d.status ?? 200;
  const produces = d.produces ?? ['application/json'];
  const names = [...e.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
  const op: Json = {
    operationId: `${e.method.toLowerCase()}${e.path.replace(/\{([^}]+)\}/g, 'By_$1').replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ?? '').toUpperCase())}`,
    summary: d.summary,
    ...(d.description && { description: d.description }),
    tags: [d.tag],
    ...(d.deprecated && { deprecated: true }),
    parameters: [...parameters(seen, 'path', d.params, names), ...parameters(seen, 'query', d.query)],
    responses: {
      [status]: {
        description: STATUS_TEXT[status] ?? 'Success',
        ...(produces.length && { content: Object.fromEntries(produces.map((t) => [t, t === 'application/json' ? { schema: {} } : {}])) }),
      },
      '4XX': { $ref: '#/components/responses/Error' },
      '5XX': { $ref: '#/components/responses/Error' },
    },
    security: d.auth === 'user' || d.auth === 'admin' ? [{ session: [] }, { bearer: [] }] : [],
    'x-auth': d.auth,
  };
  // What an API key needs here (key-scope.ts): a verb, `any`, or `session` (keys refused).
  if (d.auth === 'user' || d.auth === 'admin') op['x-api-key'] = keyRule(e.method, e.path);
  if (d.body || d.consumes) {
    const type = d.consumes ?? 'application/json';
    op.requestBody = { required: true, content: { [type]: d.body ? { schema: jsonSchema(d.body, seen) } : {} } };
  }
  return op;
}

const ERROR_SCHEMA = {
  type: 'object',
  description: 'The error envelope of every refusal: a stable lower-case code, a sentence in the reader’s language, and details such as the field at fault.',
  properties: {
    error: { type: 'string', description: 'Stable code to branch on (`validation_failed`, `not_found`, ...).' },
    message: { type: 'string', description: 'The sentence to show, in the reader’s language.' },
    details: { type: 'object', description: 'What the refusal is about, for example `{field, reason}`.' },
    params: { type: 'object', description: 'The values the sentence was filled with.' },
  },
  required: ['error', 'message'],
};

/** The OpenAPI 3.1 document of the described routes (an undescribed route is left out: the CI check names it). */
export function buildOpenApi(routers: ReadonlyArray<Router<AppState>>, version: string): Json {
  const paths: Record<string, Json> = {};
  const tags = new Set<string>();
  const seen: Schemas = new Map();
  for (const e of routeEntries(routers)) {
    if (!e.doc) continue;
    tags.add(e.doc.tag);
    (paths[e.path] ??= {})[e.method.toLowerCase()] = operation(e as RouteEntry & { doc: FullDoc }, seen);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Filedock',
      version,
      description:
        'The HTTP API of a Filedock server, generated from the schemas the routes validate with. Errors share one envelope (`Error`). Routes marked admin need an admin account; `x-api-key` names what an API key needs on a route (`session`: keys are refused there).',
    },
    servers: [{ url: '/' }],
    tags: [...tags].sort().map((name) => ({ name })),
    paths,
    components: {
      schemas: { Error: ERROR_SCHEMA },
      responses: {
        Error: { description: 'A refusal, in the error envelope', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
      },
      securitySchemes: {
        session: {
          type: 'apiKey',
          in: 'cookie',
          name: SESSION_COOKIE,
          description: 'The browser session (set by POST /api/auth/login); writes need a same-origin `Origin`.',
        },
        bearer: { type: 'http', scheme: 'bearer', description: 'A sign-in token (from POST /api/auth/login) or an API key.' },
      },
    },
  };
}
