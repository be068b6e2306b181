/**
 * Roles and permissions (admin): custom roles (`/api/admin/roles`), a
 * person's exceptions (`/api/admin/users/:id/permissions`), the permission
 * catalogue with the built-in matrix (`/api/admin/permissions`) and groups
 * with their members (`/api/admin/groups`). A person's custom role is set on
 * the user (`PATCH /api/admin/users/:id {custom_role_id}`).
 */
import Router from '@koa/router';
import { AppError } from '../../errors';
import { checkPermissionMap, PERMISSIONS, ROLE_MATRIX, VERBS, type Auth, type Verb } from '../../auth';
import type { PermissionCatalogue } from '../../contract';
import { readObject } from '../middlewares/body';
import { requireAdmin } from '../middlewares/auth';
import { validate, z } from '../validate';
import { actorOf, me, reqMeta, type AppState, type Ctx } from '../context';
import { routeDoc } from '../openapi/route-doc';

const doc = routeDoc('Admin: roles', 'admin');

const roleBody = z.strictObject({ name: z.string().max(64), permissions: z.record(z.string(), z.unknown()).default({}) });
const rolePatch = z.strictObject({ name: z.string().max(64).optional(), permissions: z.record(z.string(), z.unknown()).optional() });
const exceptionsBody = z.strictObject({ permissions: z.record(z.string(), z.unknown()) });

const idOf = (raw: string | undefined): number => {
  if (!/^\d{1,12}$/.test(raw ?? '') || Number(raw) <= 0) throw new AppError('bad_id');
  return Number(raw);
};

export function adminRoleRoutes(d: { auth: Auth; maxJsonBytes: number }): Router<AppState> {
  const r = new Router<AppState>({ prefix: '/api/admin' });
  r.use(requireAdmin);
  const roles = d.auth.roles;
  const by = (ctx: Ctx) => [actorOf(ctx), reqMeta(ctx)] as const;
  const body = (ctx: Ctx) => readObject(ctx, d.maxJsonBytes);

  r.get('/permissions', doc({ summary: 'The permission catalogue with the built-in roles’ matrix' }), (ctx) => {
    const out: PermissionCatalogue = {
      permissions: Object.entries(PERMISSIONS).map(([id, description]) => ({ id, description })),
      verbs: Object.entries(VERBS).map(([id, description]) => ({ id: id as Verb, description })),
      matrix: ROLE_MATRIX,
    };
    ctx.body = out;
  });

  r.get('/roles', doc({ summary: 'Custom roles' }), async (ctx) => {
    ctx.body = { roles: await roles.list(me(ctx)) };
  });
  r.post('/roles', doc({ summary: 'Create a custom role', body: roleBody }), async (ctx) => {
    const b = validate(roleBody, await body(ctx));
    ctx.status = 201;
    ctx.body = { role: await roles.create(me(ctx), { name: b.name, permissions: checkPermissionMap(b.permissions, 'permissions') }, ...by(ctx)) };
  });
  r.get('/roles/:id', doc({ summary: 'One custom role' }), async (ctx) => {
    ctx.body = { role: await roles.get(me(ctx), idOf(ctx.params.id)) };
  });
  r.patch('/roles/:id', doc({ summary: 'Change a custom role', body: rolePatch }), async (ctx) => {
    const b = validate(rolePatch, await body(ctx));
    const permissions = b.permissions === undefined ? undefined : checkPermissionMap(b.permissions, 'permissions');
    ctx.body = { role: await roles.update(me(ctx), idOf(ctx.params.id), { name: b.name, permissions }, ...by(ctx)) };
  });
  r.delete('/roles/:id', doc({ summary: 'Delete a custom role' }), async (ctx) => {
    await roles.delete(me(ctx), idOf(ctx.params.id), ...by(ctx));
    ctx.body = { ok: true };
  });

  const userOf = async (ctx: Ctx) => {
    const id = idOf(ctx.params.id);
    if (!(await d.auth.repo.byId(me(ctx), id))) throw new AppError('not_found', { id });
    return id;
  };
  r.get('/users/:id/permissions', doc({ summary: 'A person’s permission exceptions and effective permissions' }), async (ctx) => {
    ctx.body = { permissions: await roles.exceptions(me(ctx), await userOf(ctx)) };
  });
  r.put('/users/:id/permissions', doc({ summary: 'Set a person’s permission exceptions', body: exceptionsBody }), async (ctx) => {
    const id = await userOf(ctx);
    const b = validate(exceptionsBody, await body(ctx));
    ctx.body = { permissions: await roles.setExceptions(me(ctx), id, checkPermissionMap(b.permissions, 'permissions'), ...by(ctx)) };
  });

  r.get('/groups', doc({ summary: 'Groups with their members' }), async (ctx) => {
    ctx.body = { groups: await d.auth.repo.groupsWithMembers(me(ctx)) };
  });
  return r;
}
