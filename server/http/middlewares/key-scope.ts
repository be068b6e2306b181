/**
 * What a request signed with an API key may reach, by route: the verb a route
 * needs, `any` for routes every key may call, `session` for routes that need
 * a browser session (403 `session_required`). A route not in the table is
 * session-only, so a new route is closed to keys until it is listed here.
 * The file service checks verbs and roots again on every path (files/access);
 * this gate gives non-file routes the same rule and refuses early.
 * Sessions pass untouched.
 */
import { AppError } from '../../errors';
import { requirePermission, type Verb } from '../../auth';
import { actor, type Ctx, type Mw } from '../context';

type Rule = Verb | 'any' | 'session';

const READ = '(GET|HEAD)';
const ANY = '[A-Z]+';
const route = (methods: string, path: string) => new RegExp(`^${methods} /api/${path}`);

/** Matched against `METHOD /path`; the first match wins. */
export const KEY_ROUTES: ReadonlyArray<readonly [RegExp, Rule]> = [
  [route(READ, '(files/)?capabilities$'), 'any'],
  [route(READ, 'auth/me$'), 'any'],
  [route(READ, 'openapi\\.json$'), 'any'],
  // Plugin, app-store and store-connection administration needs a person at a browser (spec Authentication 4).
  [route(ANY, 'admin/(plugins|app-plugins|app-store|store-connections?)(/|$)'), 'session'],
  [route(ANY, 'admin(/|$)'), 'admin'],
  [route(ANY, '(ai|mcp)(/|$)'), 'ai.use'],
  // The assistant's chat is for a person at the web UI (rule 7); agents use the MCP tools at /api/mcp.
  [route(ANY, 'files/assistant(/|$)'), 'session'],
  [route(ANY, 'files/(share|permissions/share-mail)(/|$)'), 'shares:write'],
  [route(ANY, 'files/plugins(/|$)'), 'session'],
  // The vault and encrypted folders' keys need the person at a browser (docs/vault.md).
  [route(ANY, 'vault(/|$)'), 'session'],
  // Reads sent as POST: an archive's table of contents, a folder's revalidation.
  [route('POST', 'files/(archive/list|refresh)$'), 'files:read'],
  [route(READ, 'files(/|$)'), 'files:read'],
  [route(ANY, 'files(/|$)'), 'files:write'],
  [route(READ, '(events|notifications)(/|$)'), 'files:read'],
  [route('POST', 'notifications/read$'), 'files:read'],
];

/** Request lines remembered with their rule; past it the memo starts over (paths with ids, tokens). Longer lines are not kept. */
const MEMO_LINES = 4096;
const MEMO_LINE_CHARS = 256;
const ruleOf = new Map<string, Rule>();

/** The rule for a request (`session` when none matches). */
export function keyRule(method: string, path: string): Rule {
  const line = `${method} ${path}`;
  let rule = ruleOf.get(line);
  if (rule) return rule;
  rule = KEY_ROUTES.find(([re]) => re.test(line))?.[1] ?? 'session';
  if (line.length <= MEMO_LINE_CHARS) {
    if (ruleOf.size >= MEMO_LINES) ruleOf.clear();
    ruleOf.set(line, rule);
  }
  return rule;
}

const AI_ADMIN = /^\/api\/ai\/admin(\/|$)/;

/**
 * `/api/ai/admin/...` is the admin API for admin-verb keys (the agent and
 * replication tools reach it there): served by the `/api/admin/...` routes
 * with the key's `admin` verb checked like any admin route. A key without
 * the verb gets 403 `permission_denied`; a session is refused there too.
 */
export const aiAdminAlias: Mw = (ctx, next) => {
  if (AI_ADMIN.test(ctx.path)) {
    if (!ctx.state.principal) throw new AppError('unauthenticated');
    if (!ctx.state.key) throw new AppError('forbidden', { reason: 'for API keys; the web UI uses /api/admin' });
    requirePermission(actor(ctx as Ctx), 'admin');
    ctx.path = ctx.path.replace(/^\/api\/ai\/admin/, '/api/admin');
  }
  return next();
};

/** Refuses a key on a route its verbs do not cover (see KEY_ROUTES). */
export const keyScope: Mw = (ctx, next) => {
  const key = ctx.state.key;
  if (key && (ctx.path === '/api' || ctx.path.startsWith('/api/'))) {
    const rule = keyRule(ctx.method, ctx.path);
    if (rule === 'session') throw new AppError('session_required');
    // An admin-verb key whose owner is no longer an admin gets the admin routes' own 403 `forbidden`.
    if (rule !== 'any' && !(rule === 'admin' && key.verbs.includes('admin'))) requirePermission(actor(ctx), rule);
  }
  return next();
};
