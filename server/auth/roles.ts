/**
 * Custom roles and per-person exceptions (the tables behind steps 2 and 3 of
 * the permission decision, auth/permissions.ts). A custom role is a named set
 * of permission settings over a person's built-in role; an exception is one
 * person's allow or deny of one permission. Changes apply at once: cached
 * principals are dropped.
 */
import { AppError } from '../errors';
import type { Db } from '../db';
import type { ActorRef, EventBus, RequestMeta } from '../events';
import { isPermission } from './permissions';

import type { RoleView } from '../contract';

export type { RoleView };

/** Checks a permission map from a request (`validation_failed` naming the bad id). */
export function checkPermissionMap(v: unknown, field: string): Record<string, boolean> {
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new AppError('validation_failed', { field, reason: 'an object of permission → true/false' }, { field });
  for (const [k, x] of Object.entries(v)) {
    if (!isPermission(k)) throw new AppError('validation_failed', { field, reason: `unknown permission ${k.slice(0, 60)}` }, { field, permission: k.slice(0, 60) });
    if (typeof x !== 'boolean') throw new AppError('validation_failed', { field, reason: `${k} must be true or false` }, { field, permission: k });
  }
  return v as Record<string, boolean>;
}

export class Roles {
  constructor(private db: Db, private bus: EventBus, private changed: () => void) {}

  list(): RoleView[] {
    const rows = this.db.all(
      this.db.k
        .selectFrom('roles')
        .leftJoin('users', 'users.custom_role_id', 'roles.id')
        .select((eb) => ['roles.id', 'roles.name', 'roles.permissions', 'roles.created_at', 'roles.updated_at', eb.fn.count<number>('users.id').as('members')])
        .groupBy('roles.id')
        .orderBy('roles.name'),
    );
    return rows.map((r) => ({ ...r, permissions: JSON.parse(r.permissions) as Record<string, boolean> }));
  }

  get(id: number): RoleView {
    const r = this.list().find((x) => x.id === id);
    if (!r) throw new AppError('not_found', { id });
    return r;
  }

  /** Creates a role; a name in use → `name_taken`. */
  async create(input: { name: string; permissions: Record<string, boolean> }, by: ActorRef | null, request?: RequestMeta): Promise<RoleView> {
    const name = roleName(input.name);
    if (this.db.first(this.db.k.selectFrom('roles').select('id').where('name', '=', name))) throw new AppError('name_taken', { name }, { field: 'name' });
    const now = new Date().toISOString();
    const id = this.db.first(this.db.k.insertInto('roles').values({ name, permissions: JSON.stringify(input.permissions), created_at: now, updated_at: now }).returning('id'))!.id;
    await this.bus.emit('audit', { action: 'admin.config_change', actor: by, request, resource: `role:${id}`, meta: { created: name, permissions: input.permissions } });
    return this.get(id);
  }

  /** Renames and/or replaces the settings of a role; applies to its members at once. */
  async update(id: number, input: { name?: string; permissions?: Record<string, boolean> }, by: ActorRef | null, request?: RequestMeta): Promise<RoleView> {
    const before = this.get(id);
    const set: { name?: string; permissions?: string; updated_at: string } = { updated_at: new Date().toISOString() };
    if (input.name !== undefined) {
      set.name = roleName(input.name);
      if (this.db.first(this.db.k.selectFrom('roles').select('id').where('name', '=', set.name).where('id', '!=', id))) throw new AppError('name_taken', { name: set.name }, { field: 'name' });
    }
    if (input.permissions !== undefined) set.permissions = JSON.stringify(input.permissions);
    this.db.run(this.db.k.updateTable('roles').set(set).where('id', '=', id));
    this.changed();
    await this.bus.emit('audit', { action: 'admin.config_change', actor: by, request, resource: `role:${id}`, meta: { from: { name: before.name, permissions: before.permissions }, to: input } });
    return this.get(id);
  }

  /** Deletes a role; its members keep their built-in role. */
  async delete(id: number, by: ActorRef | null, request?: RequestMeta): Promise<void> {
    const before = this.get(id);
    this.db.run(this.db.k.deleteFrom('roles').where('id', '=', id));
    this.changed();
    await this.bus.emit('audit', { action: 'admin.config_change', actor: by, request, resource: `role:${id}`, meta: { deleted: before.name } });
  }

  /** A person's exceptions (permission id → allowed). */
  exceptions(userId: number): Record<string, boolean> {
    const rows = this.db.all(this.db.k.selectFrom('user_permissions').select(['permission', 'allowed']).where('user_id', '=', userId));
    return Object.fromEntries(rows.map((r) => [r.permission, !!r.allowed]));
  }

  /** Replaces a person's exceptions. */
  async setExceptions(userId: number, perms: Record<string, boolean>, by: ActorRef | null, request?: RequestMeta): Promise<Record<string, boolean>> {
    const before = this.exceptions(userId);
    this.db.sqlite.transaction(() => {
      this.db.run(this.db.k.deleteFrom('user_permissions').where('user_id', '=', userId));
      for (const [permission, allowed] of Object.entries(perms)) this.db.run(this.db.k.insertInto('user_permissions').values({ user_id: userId, permission, allowed: allowed ? 1 : 0 }));
    })();
    this.changed();
    await this.bus.emit('audit', { action: 'admin.config_change', actor: by, request, resource: `user:${userId}`, meta: { permissions: { from: before, to: perms } } });
    return this.exceptions(userId);
  }
}

function roleName(v: unknown): string {
  const n = typeof v === 'string' ? v.trim() : '';
  if (!n || n.length > 64 || /[\u0000-\u001f\u007f]/.test(n)) throw new AppError('validation_failed', { field: 'name', reason: '1 to 64 characters' }, { field: 'name' });
  if (['admin', 'user', 'viewer'].includes(n.toLowerCase())) throw new AppError('name_taken', { name: n }, { field: 'name', reason: 'a built-in role' });
  return n;
}
