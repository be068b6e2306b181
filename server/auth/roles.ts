/**
 * Custom roles and per-person exceptions (the tables behind steps 2 and 3 of
 * the permission decision, auth/permissions.ts). A custom role is a named set
 * of permission settings over a person's built-in role; an exception is one
 * person's allow or deny of one permission. Changes apply at once: cached
 * principals are dropped.
 */
import { AppError } from '../errors';
import type { Db, TenantScope } from '../db';
import type { ActorRef, EventBus, RequestMeta } from '../events';
import { isPermission } from './permissions';
import { RolesRepo } from './roles.repo';

import type { RoleView } from '../contract';

export type { RoleView };

/** Checks a permission map from a request (`validation_failed` naming the bad id). */
export function checkPermissionMap(v: unknown, field: string): Record<string, boolean> {
  if (!v || typeof v !== 'object' || Array.isArray(v))
    throw new AppError('validation_failed', { field, reason: 'an object of permission → true/false' }, { field });
  for (const [k, x] of Object.entries(v)) {
    if (!isPermission(k))
      throw new AppError('validation_failed', { field, reason: `unknown permission ${k.slice(0, 60)}` }, { field, permission: k.slice(0, 60) });
    if (typeof x !== 'boolean') throw new AppError('validation_failed', { field, reason: `${k} must be true or false` }, { field, permission: k });
  }
  return v as Record<string, boolean>;
}

export class Roles {
  private repo: RolesRepo;

  constructor(
    db: Db,
    private bus: EventBus,
    private changed: () => void,
  ) {
    this.repo = new RolesRepo(db);
  }

  list(s: TenantScope): Promise<RoleView[]> {
    return this.repo.list(s);
  }

  /** A role of the tenant; another tenant's is not found. */
  async get(s: TenantScope, id: number): Promise<RoleView> {
    const r = (await this.list(s)).find((x) => x.id === id);
    if (!r) throw new AppError('not_found', { id });
    return r;
  }

  /** Creates a role; a name in use → `name_taken`. */
  async create(s: TenantScope, input: { name: string; permissions: Record<string, boolean> }, by: ActorRef | null, request?: RequestMeta): Promise<RoleView> {
    const name = roleName(input.name);
    const id = await this.repo.create(s, name, input.permissions, new Date().toISOString());
    if (id === undefined) throw new AppError('name_taken', { name }, { field: 'name' });
    await this.bus.emit(s, 'audit', {
      action: 'admin.config_change',
      actor: by,
      request,
      resource: `role:${id}`,
      meta: { created: name, permissions: input.permissions },
    });
    return this.get(s, id);
  }

  /** Renames and/or replaces the settings of a role; applies to its members at once. */
  async update(
    s: TenantScope,
    id: number,
    input: { name?: string; permissions?: Record<string, boolean> },
    by: ActorRef | null,
    request?: RequestMeta,
  ): Promise<RoleView> {
    const before = await this.get(s, id);
    const name = input.name === undefined ? undefined : roleName(input.name);
    if (!(await this.repo.update(s, id, { name, permissions: input.permissions }, new Date().toISOString())))
      throw new AppError('name_taken', { name }, { field: 'name' });
    this.changed();
    await this.bus.emit(s, 'audit', {
      action: 'admin.config_change',
      actor: by,
      request,
      resource: `role:${id}`,
      meta: { from: { name: before.name, permissions: before.permissions }, to: input },
    });
    return this.get(s, id);
  }

  /** Deletes a role; its members keep their built-in role. */
  async delete(s: TenantScope, id: number, by: ActorRef | null, request?: RequestMeta): Promise<void> {
    const before = await this.get(s, id);
    await this.repo.delete(s, id);
    this.changed();
    await this.bus.emit(s, 'audit', { action: 'admin.config_change', actor: by, request, resource: `role:${id}`, meta: { deleted: before.name } });
  }

  /** A person's exceptions (permission id → allowed). */
  exceptions(s: TenantScope, userId: number): Promise<Record<string, boolean>> {
    return this.repo.exceptions(s, userId);
  }

  /** Replaces a person's exceptions. */
  async setExceptions(
    s: TenantScope,
    userId: number,
    perms: Record<string, boolean>,
    by: ActorRef | null,
    request?: RequestMeta,
  ): Promise<Record<string, boolean>> {
    const before = await this.exceptions(s, userId);
    await this.repo.setExceptions(s, userId, perms);
    this.changed();
    await this.bus.emit(s, 'audit', {
      action: 'admin.config_change',
      actor: by,
      request,
      resource: `user:${userId}`,
      meta: { permissions: { from: before, to: perms } },
    });
    return this.exceptions(s, userId);
  }
}

function roleName(v: unknown): string {
  const n = typeof v === 'string' ? v.trim() : '';
  if (!n || n.length > 64 || /[\u0000-\u001f\u007f]/.test(n))
    throw new AppError('validation_failed', { field: 'name', reason: '1 to 64 characters' }, { field: 'name' });
  if (['admin', 'user', 'viewer'].includes(n.toLowerCase())) throw new AppError('name_taken', { name: n }, { field: 'name', reason: 'a built-in role' });
  return n;
}
