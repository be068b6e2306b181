/**
 * `roles` and `user_permissions` (the auth module owns both): custom roles
 * with their member counts, and a person's own permission exceptions, each
 * within a tenant. The role name is unique per tenant without regard to case
 * in the schema, so a create is one conditional insert; a rename checks and
 * writes in one unit.
 */
import type { Db, TenantScope } from '../db';

export interface RoleRow {
  id: number;
  name: string;
  permissions: Record<string, boolean>;
  created_at: string;
  updated_at: string;
  members: number;
}

export class RolesRepo {
  constructor(private db: Db) {}

  /** Every role of the tenant by name, with how many people hold it. */
  async list(s: TenantScope): Promise<RoleRow[]> {
    const rows = await this.db.async.all(
      this.db.k
        .selectFrom('roles')
        .leftJoin('users', 'users.custom_role_id', 'roles.id')
        .select((eb) => [
          'roles.id',
          'roles.name',
          'roles.permissions',
          'roles.created_at',
          'roles.updated_at',
          eb.fn.count<number | string>('users.id').as('members'),
        ])
        .where('roles.tenant_id', '=', s.tenant_id)
        .groupBy('roles.id')
        .orderBy('roles.name'),
    );
    // PostgreSQL counts in bigint, which its driver hands over as a string.
    return rows.map((r) => ({ ...r, members: Number(r.members), permissions: JSON.parse(r.permissions) as Record<string, boolean> }));
  }

  /** The new role's id, or undefined when the name is taken in the tenant. */
  async create(s: TenantScope, name: string, permissions: Record<string, boolean>, at: string): Promise<number | undefined> {
    const q = this.db.k
      .insertInto('roles')
      .values({ tenant_id: s.tenant_id, name, permissions: JSON.stringify(permissions), created_at: at, updated_at: at })
      .onConflict((c) => c.doNothing())
      .returning('id');
    const row = await this.db.async.unit(function* (t) {
      return yield* t.first(q);
    });
    return row?.id;
  }

  /** Renames and/or replaces the settings; false when the new name is another role's of the tenant. */
  update(s: TenantScope, id: number, set: { name?: string; permissions?: Record<string, boolean> }, at: string): Promise<boolean> {
    const k = this.db.k;
    const clash =
      set.name === undefined
        ? null
        : k.selectFrom('roles').select('id').where('tenant_id', '=', s.tenant_id).where('name', '=', set.name).where('id', '!=', id);
    const write = k
      .updateTable('roles')
      .set({
        updated_at: at,
        ...(set.name !== undefined && { name: set.name }),
        ...(set.permissions !== undefined && { permissions: JSON.stringify(set.permissions) }),
      })
      .where('tenant_id', '=', s.tenant_id)
      .where('id', '=', id);
    return this.db.async.unit(
      function* (t) {
        if (clash && (yield* t.first(clash))) return false;
        yield* t.run(write);
        return true;
      },
      { isolation: 'serializable' },
    );
  }

  async delete(s: TenantScope, id: number): Promise<void> {
    await this.db.async.run(this.db.k.deleteFrom('roles').where('tenant_id', '=', s.tenant_id).where('id', '=', id));
  }

  /** A person's exceptions (permission id → allowed). */
  async exceptions(s: TenantScope, userId: number): Promise<Record<string, boolean>> {
    const rows = await this.db.async.all(
      this.db.k.selectFrom('user_permissions').select(['permission', 'allowed']).where('tenant_id', '=', s.tenant_id).where('user_id', '=', userId),
    );
    return Object.fromEntries(rows.map((r) => [r.permission, !!r.allowed]));
  }

  /** Replaces a person's exceptions as one unit. */
  async setExceptions(s: TenantScope, userId: number, perms: Record<string, boolean>): Promise<void> {
    const k = this.db.k;
    const rows = Object.entries(perms).map(([permission, allowed]) => ({ user_id: userId, permission, allowed: allowed ? 1 : 0 }));
    // Serializable: two replacements racing under read committed both delete nothing new and collide on insert.
    await this.db.async.unit(
      function* (t) {
        yield* t.run(k.deleteFrom('user_permissions').where('tenant_id', '=', s.tenant_id).where('user_id', '=', userId));
        if (rows.length) yield* t.run(k.insertInto('user_permissions').values(rows.map((r) => ({ ...r, tenant_id: s.tenant_id }))));
      },
      { isolation: 'serializable' },
    );
  }
}
