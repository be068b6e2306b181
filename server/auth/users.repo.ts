/** The users, groups and user_groups tables (owned by auth). */
import type { Principal } from './types';
import type { Db } from '../db';
import type { Compilable } from 'kysely';
import { escapeLike, withinLimit, nowIso, DEFAULT_TENANT, type TenantScope, type Tx, type Unit } from '../db';
import { tenantOverQuota } from './tenant-quotas';
import type { UsersTable } from '../db/tables';
import type { Role, UserView } from './types';
import type { GroupView } from '../contract';

export type UserRow = Omit<UsersTable, 'id' | 'platform_operator'> & { id: number; platform_operator: number };
/** A new account's row. */
export type NewUser = Pick<UserRow, 'email' | 'username' | 'role' | 'password_hash'> & { language?: string | null; auth_driver?: string };
/** The columns an account change may set. */
export type UserPatch = Partial<Pick<UserRow, 'email' | 'username' | 'role' | 'disabled' | 'language' | 'password_hash' | 'quota_bytes' | 'custom_role_id'>>;
/** An account search: a substring of e-mail or username, a role, a page. */
export interface UserQuery {
  q?: string;
  role?: Role;
  limit?: number;
  offset?: number;
}

/** Why a change to an account was refused: the account is gone, or it is the last enabled admin. */
export type Refused = 'not_found' | 'last_admin';

/**
 * Every method takes the tenant first (docs/tenants.md): another tenant's account is not found, by id,
 * login or name, exactly like a missing one.
 */
export class UsersRepo {
  constructor(private db: Db) {}

  /** The account, or undefined. */
  byId(s: TenantScope, id: number): Promise<UserRow | undefined> {
    return this.db.async.read((t) => this.rowIn(t, s, id));
  }

  /** By e-mail, or by username when `login` has no `@`. Case-insensitive. */
  async byLogin(s: TenantScope, login: string): Promise<UserRow | undefined> {
    const col = login.includes('@') ? 'email' : 'username';
    return (await this.db.async.first(this.db.k.selectFrom('users').selectAll().where('tenant_id', '=', s.tenant_id).where(col, '=', login.trim()))) as
      | UserRow
      | undefined;
  }

  /** Whether another account of the tenant (not `exceptId`) has this e-mail or username (case-insensitive). */
  async exists(s: TenantScope, col: 'email' | 'username', value: string, exceptId?: number): Promise<boolean> {
    return !!(await this.db.async.first(
      this.db.k
        .selectFrom('users')
        .select('id')
        .where('tenant_id', '=', s.tenant_id)
        .where(col, '=', value.trim())
        .where('id', '!=', exceptId ?? -1),
    ));
  }

  /** How many accounts the tenant has. */
  async count(s: TenantScope): Promise<number> {
    return Number(
      (await this.db.async.first(
        this.db.k
          .selectFrom('users')
          .where('tenant_id', '=', s.tenant_id)
          .select((eb) => eb.fn.countAll<number | string>().as('n')),
      ))!.n,
    );
  }

  /**
   * Replaces a password hash with a stronger one of the same password, only while the row still holds `from`
   * (a password changed meanwhile wins). Leaves `updated_at`: the account did not change. True when replaced.
   */
  async rehash(s: TenantScope, id: number, from: string, to: string): Promise<boolean> {
    return (
      (await this.db.async.run(
        this.db.k.updateTable('users').set({ password_hash: to }).where('tenant_id', '=', s.tenant_id).where('id', '=', id).where('password_hash', '=', from),
      )) > 0
    );
  }

  /**
   * Makes a person of tenant 1 a platform operator (docs/tenants.md, "Who is who"): its first admin, at
   * set-up or first-run seeding. Idempotent; false when no such person is in tenant 1.
   */
  async makePlatformOperator(id: number): Promise<boolean> {
    return (await this.db.async.run(this.db.k.updateTable('users').set({ platform_operator: 1 }).where('tenant_id', '=', 1).where('id', '=', id))) > 0;
  }

  /** Every group of the tenant with its members, by name. */
  async groupsWithMembers(s: TenantScope): Promise<GroupView[]> {
    const rows = await this.db.async.sql<{ name: string; id: number | null; email: string | null; username: string | null }>(
      'SELECT g.name, u.id, u.email, u.username FROM groups g LEFT JOIN user_groups ug ON ug.group_id = g.id LEFT JOIN users u ON u.id = ug.user_id WHERE g.tenant_id = ? ORDER BY g.name, u.email',
      [s.tenant_id],
    );
    const out = new Map<string, GroupView>();
    for (const r of rows) {
      const g = out.get(r.name) ?? out.set(r.name, { name: r.name, members: [] }).get(r.name)!;
      if (r.id !== null) g.members.push({ id: r.id, email: r.email!, username: r.username! });
    }
    return [...out.values()];
  }

  /** Whether the tenant has this custom role (another tenant's is not there). */
  async roleExists(s: TenantScope, id: number): Promise<boolean> {
    return (await this.db.async.first(this.db.k.selectFrom('roles').select('id').where('tenant_id', '=', s.tenant_id).where('id', '=', id))) !== undefined;
  }

  /**
   * Stores an account of the tenant with its groups (one unit); its id. `people`: the tenant's `people` quota,
   * counted in the same unit (one tenant's inserts one after the other), so two accounts made at once cannot
   * both take the last place; over it, `quota_exceeded` and nothing written.
   */
  insert(s: TenantScope, u: NewUser, groups?: string[], people?: number | null): Promise<number>;
  /** @deprecated Unscoped: tenant 1's account, for the fixtures of modules not scoped yet (docs/tenants.md, "Status"). */
  insert(u: NewUser, groups?: string[]): Promise<number>;
  insert(a: TenantScope | NewUser, b?: NewUser | string[], c: string[] = [], people: number | null = null): Promise<number> {
    // The unscoped form's second argument is the groups (or nothing); the scoped form's is the account.
    const [s, u, groups] = b === undefined || Array.isArray(b) ? [DEFAULT_TENANT, a as NewUser, b ?? []] : [a as TenantScope, b, c];
    const t0 = nowIso();
    const row = {
      ...u,
      email: u.email.trim(),
      username: u.username.trim(),
      disabled: 0,
      language: u.language ?? null,
      auth_driver: u.auth_driver ?? 'local',
      created_at: t0,
      updated_at: t0,
    };
    const insert = this.db.k
      .insertInto('users')
      .values({ ...row, tenant_id: s.tenant_id })
      .returning('id');
    return this.db.async.unit((t) => this.insertIn(t, s, insert, groups, people));
  }

  private *insertIn(t: Tx, s: TenantScope, insert: Compilable<{ id: number }>, groups: string[], people: number | null): Unit<number> {
    if (people !== null)
      yield* withinLimit(t, this.db, s, people, ['SELECT count(*) AS n FROM users WHERE tenant_id = ?', [s.tenant_id]], (used) =>
        tenantOverQuota('people', people, used),
      );
    const id = Number((yield* t.first(insert))!.id);
    if (groups.length) yield* this.setGroupsIn(t, s, id, groups);
    return id;
  }

  /**
   * Changes an account (and replaces its groups when `groups` is given) in one unit; the row as it was
   * before. Refuses (`last_admin`, nothing written) a change that would leave no enabled admin: two
   * admins demoting or disabling each other at once cannot both pass (serializable on PostgreSQL).
   */
  update(s: TenantScope, id: number, patch: UserPatch, groups?: string[]): Promise<UserRow | Refused> {
    const mayDropAdmin = (patch.role !== undefined && patch.role !== 'admin') || !!patch.disabled;
    return this.db.async.unit((t) => this.updateIn(t, s, id, patch, groups), mayDropAdmin ? { isolation: 'serializable' } : {});
  }

  private *updateIn(t: Tx, s: TenantScope, id: number, patch: UserPatch, groups?: string[]): Unit<UserRow | Refused> {
    const { k } = this.db;
    const before = yield* this.rowIn(t, s, id);
    if (!before) return 'not_found';
    const after = { ...before, ...patch };
    if (after.role !== 'admin' || after.disabled) {
      if (yield* this.lastAdminIn(t, before)) return 'last_admin';
    }
    if (Object.keys(patch).length)
      yield* t.run(
        k
          .updateTable('users')
          .set({ ...patch, updated_at: nowIso() })
          .where('tenant_id', '=', s.tenant_id)
          .where('id', '=', id),
      );
    if (groups) yield* this.setGroupsIn(t, s, id, groups);
    return before;
  }

  /** Deletes an account in one serializable unit, refused for the last enabled admin; the row deleted. */
  delete(s: TenantScope, id: number): Promise<UserRow | Refused> {
    return this.db.async.unit((t) => this.deleteIn(t, s, id), { isolation: 'serializable' });
  }

  private *deleteIn(t: Tx, s: TenantScope, id: number): Unit<UserRow | Refused> {
    const before = yield* this.rowIn(t, s, id);
    if (!before) return 'not_found';
    if (yield* this.lastAdminIn(t, before)) return 'last_admin';
    yield* t.run(this.db.k.deleteFrom('users').where('tenant_id', '=', s.tenant_id).where('id', '=', id));
    return before;
  }

  private *rowIn(t: Tx, s: TenantScope, id: number): Unit<UserRow | undefined> {
    return (yield* t.first(this.db.k.selectFrom('users').selectAll().where('tenant_id', '=', s.tenant_id).where('id', '=', id))) as UserRow | undefined;
  }

  /** Whether `u` is an enabled admin and no other enabled admin of its tenant exists. */
  private *lastAdminIn(t: Tx, u: UserRow): Unit<boolean> {
    if (u.role !== 'admin' || u.disabled) return false;
    const other = yield* t.first(
      this.db.k
        .selectFrom('users')
        .select('id')
        .where('tenant_id', '=', u.tenant_id)
        .where('role', '=', 'admin')
        .where('disabled', '=', 0)
        .where('id', '!=', u.id)
        .limit(1),
    );
    return other === undefined;
  }

  /** Replaces the user's groups, creating missing group rows of the tenant. */
  setGroups(s: TenantScope, userId: number, groups: string[]): Promise<void> {
    return this.db.async.unit((t) => this.setGroupsIn(t, s, userId, groups));
  }

  private *setGroupsIn(t: Tx, s: TenantScope, userId: number, groups: string[]): Unit<void> {
    const { k } = this.db;
    yield* t.run(k.deleteFrom('user_groups').where('tenant_id', '=', s.tenant_id).where('user_id', '=', userId));
    const names = [...new Set(groups.map((g) => g.trim()).filter(Boolean))];
    if (!names.length) return;
    yield* t.run(
      k
        .insertInto('groups')
        .values(names.map((name) => ({ name, tenant_id: s.tenant_id })))
        .onConflict((oc) => oc.columns(['tenant_id', 'name']).doNothing()),
    );
    const ids = yield* t.all(k.selectFrom('groups').select('id').where('tenant_id', '=', s.tenant_id).where('name', 'in', names));
    yield* t.run(k.insertInto('user_groups').values(ids.map((g) => ({ user_id: userId, group_id: g.id, tenant_id: s.tenant_id }))));
  }

  /** The tenant's accounts matching `q` (a substring of e-mail or username), by id. */
  list(s: TenantScope, q: UserQuery): Promise<UserRow[]> {
    return this.db.async.read((t) => this.listIn(t, s, q));
  }

  /** The same as the admin pages show them (with their groups). */
  listViews(s: TenantScope, q: UserQuery): Promise<UserView[]> {
    return this.db.async.read((t) => this.listViewsIn(t, s, q));
  }

  private *listViewsIn(t: Tx, s: TenantScope, q: UserQuery): Unit<UserView[]> {
    return yield* this.viewsIn(t, s, yield* this.listIn(t, s, q));
  }

  /** The account as the admin pages show it (with its groups), or undefined. */
  view(s: TenantScope, id: number): Promise<UserView | undefined> {
    return this.db.async.read((t) => this.viewIn(t, s, id));
  }

  private *viewIn(t: Tx, s: TenantScope, id: number): Unit<UserView | undefined> {
    const u = yield* this.rowIn(t, s, id);
    return u ? (yield* this.viewsIn(t, s, [u]))[0] : undefined;
  }

  private *listIn(t: Tx, s: TenantScope, q: UserQuery): Unit<UserRow[]> {
    const where: string[] = [];
    const args: unknown[] = [];
    if (q.q) {
      where.push("(email LIKE ? ESCAPE '\\' OR username LIKE ? ESCAPE '\\')");
      const like = `%${escapeLike(q.q)}%`;
      args.push(like, like);
    }
    if (q.role) {
      where.push('role = ?');
      args.push(q.role);
    }
    const text = `SELECT * FROM users WHERE tenant_id = ?${where.map((w) => ` AND ${w}`).join('')} ORDER BY id LIMIT ? OFFSET ?`;
    return yield* t.sql<UserRow>(text, [s.tenant_id, ...args, q.limit ?? 500, q.offset ?? 0]);
  }

  private *viewsIn(t: Tx, s: TenantScope, rows: UserRow[]): Unit<UserView[]> {
    const groups = new Map<number, string[]>();
    // Pages of ids keep each statement under both databases' bound on parameters.
    for (let i = 0; i < rows.length; i += 1000) {
      const ids = rows.slice(i, i + 1000).map((u) => u.id);
      const page = yield* t.all(
        this.db.k
          .selectFrom('groups as g')
          .innerJoin('user_groups as ug', 'ug.group_id', 'g.id')
          .select(['ug.user_id', 'g.name'])
          .where('g.tenant_id', '=', s.tenant_id)
          .where('ug.user_id', 'in', ids)
          .orderBy('g.name'),
      );
      for (const r of page) (groups.get(r.user_id) ?? groups.set(r.user_id, []).get(r.user_id)!).push(r.name);
    }
    return rows.map((u) => ({
      id: u.id,
      email: u.email,
      username: u.username,
      role: u.role,
      disabled: !!u.disabled,
      language: u.language,
      groups: groups.get(u.id) ?? [],
      quota_bytes: u.quota_bytes === null ? null : Number(u.quota_bytes),
      custom_role_id: u.custom_role_id ?? null,
      auth_driver: u.auth_driver,
      created_at: u.created_at,
      updated_at: u.updated_at,
    }));
  }

  /**
   * A live account as a principal, or null when it is missing or disabled: a session's or a key's first
   * request, a job's restored actor, a share's creator (read fresh: disabling it revokes its links at once).
   */
  principal(s: TenantScope, id: number, sessionId = ''): Promise<Principal | null> {
    return this.db.async.read((t) => this.principalRead(t, s, id, sessionId));
  }

  private *principalRead(t: Tx, s: TenantScope, id: number, sessionId: string): Unit<Principal | null> {
    const { k } = this.db;
    const u = yield* this.rowIn(t, s, id);
    if (!u || u.disabled) return null;
    const custom = u.custom_role_id
      ? yield* t.first(k.selectFrom('roles').select('permissions').where('tenant_id', '=', s.tenant_id).where('id', '=', u.custom_role_id))
      : undefined;
    const exceptions = yield* t.all(
      k.selectFrom('user_permissions').select(['permission', 'allowed']).where('tenant_id', '=', s.tenant_id).where('user_id', '=', id),
    );
    const groups = yield* t.all(
      k
        .selectFrom('groups as g')
        .innerJoin('user_groups as ug', 'ug.group_id', 'g.id')
        .select('g.name')
        .where('g.tenant_id', '=', s.tenant_id)
        .where('ug.user_id', '=', id)
        .orderBy('g.name'),
    );
    return principalOf(u, custom?.permissions, exceptions, groups, sessionId);
  }

  /** Every enabled account of the tenant as a principal (no session), in four statements whatever their number (an app's seat count). */
  principals(s: TenantScope): Promise<Principal[]> {
    return this.db.async.read((t) => this.principalsIn(t, s));
  }

  private *principalsIn(t: Tx, s: TenantScope): Unit<Principal[]> {
    const { k } = this.db;
    const users = yield* t.all(k.selectFrom('users').selectAll().where('tenant_id', '=', s.tenant_id).where('disabled', '=', 0).orderBy('id'));
    const roles = new Map(
      (yield* t.all(k.selectFrom('roles').select(['id', 'permissions']).where('tenant_id', '=', s.tenant_id))).map((r) => [r.id, r.permissions]),
    );
    const exceptions = byUser(yield* t.all(k.selectFrom('user_permissions').select(['user_id', 'permission', 'allowed']).where('tenant_id', '=', s.tenant_id)));
    const groups = byUser(
      yield* t.all(
        k
          .selectFrom('groups as g')
          .innerJoin('user_groups as ug', 'ug.group_id', 'g.id')
          .select(['ug.user_id', 'g.name'])
          .where('g.tenant_id', '=', s.tenant_id)
          .orderBy('g.name'),
      ),
    );
    return users.map((u) => principalOf(u, u.custom_role_id ? roles.get(u.custom_role_id) : undefined, exceptions.get(u.id) ?? [], groups.get(u.id) ?? [], ''));
  }
}

/** Rows grouped by their `user_id`, in order. */
function byUser<R extends { user_id: number }>(rows: R[]): Map<number, R[]> {
  const out = new Map<number, R[]>();
  for (const r of rows) (out.get(r.user_id) ?? out.set(r.user_id, []).get(r.user_id)!).push(r);
  return out;
}

/** A live account's principal from its rows: its custom role's permissions (JSON), its exceptions and its groups by name. */
function principalOf(
  u: Pick<UserRow, 'id' | 'tenant_id' | 'email' | 'username' | 'role' | 'language' | 'platform_operator'>,
  customRole: string | undefined,
  exceptions: Array<{ permission: string; allowed: number | boolean }>,
  groups: Array<{ name: string }>,
  sessionId: string,
): Principal {
  return {
    id: u.id,
    tenant_id: Number(u.tenant_id),
    email: u.email,
    username: u.username,
    role: u.role as Role,
    groups: groups.map((g) => g.name),
    language: u.language,
    sessionId,
    ...(u.platform_operator ? { platform_operator: true } : {}),
    customRole: customRole ? (JSON.parse(customRole) as Record<string, boolean>) : null,
    exceptions: exceptions.length ? Object.fromEntries(exceptions.map((e) => [e.permission, !!e.allowed])) : null,
  };
}
