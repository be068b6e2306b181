/** The users, groups and user_groups tables (owned by auth). */
import type { Principal } from './types';
import type { Db } from '../db';
import { nowIso, readSync, type Tx, type Unit } from '../db';
import type { UsersTable } from '../db/tables';
import type { Role, UserView } from './types';
import type { GroupView } from '../contract';

export type UserRow = Omit<UsersTable, 'id'> & { id: number };

export class UsersRepo {
  constructor(private db: Db) {}

  byId(id: number): UserRow | undefined {
    return this.db.sqlite.prepare('SELECT * FROM users WHERE id = ?').get(id) as UserRow | undefined;
  }

  /** By e-mail, or by username when `login` has no `@`. Case-insensitive. */
  async byLogin(login: string): Promise<UserRow | undefined> {
    const col = login.includes('@') ? 'email' : 'username';
    return (await this.db.async.first(this.db.k.selectFrom('users').selectAll().where(col, '=', login.trim()))) as UserRow | undefined;
  }

  /** Whether another account (not `exceptId`) has this e-mail or username (case-insensitive). */
  async exists(col: 'email' | 'username', value: string, exceptId?: number): Promise<boolean> {
    return !!(await this.db.async.first(
      this.db.k
        .selectFrom('users')
        .select('id')
        .where(col, '=', value.trim())
        .where('id', '!=', exceptId ?? -1),
    ));
  }

  /** How many accounts there are. */
  async count(): Promise<number> {
    return Number((await this.db.async.first(this.db.k.selectFrom('users').select((eb) => eb.fn.countAll<number | string>().as('n'))))!.n);
  }

  groupsOf(userId: number): string[] {
    return (
      this.db.sqlite
        .prepare('SELECT g.name FROM groups g JOIN user_groups ug ON ug.group_id = g.id WHERE ug.user_id = ? ORDER BY g.name')
        .all(userId) as Array<{ name: string }>
    ).map((r) => r.name);
  }

  insert(u: { email: string; username: string; role: Role; password_hash: string | null; language?: string | null; auth_driver?: string }): number {
    const t = nowIso();
    return Number(
      this.db.sqlite
        .prepare('INSERT INTO users (email, username, role, password_hash, language, auth_driver, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
        .run(u.email.trim(), u.username.trim(), u.role, u.password_hash, u.language ?? null, u.auth_driver ?? 'local', t, t).lastInsertRowid,
    );
  }

  update(
    id: number,
    patch: Partial<Pick<UserRow, 'email' | 'username' | 'role' | 'disabled' | 'language' | 'password_hash' | 'quota_bytes' | 'custom_role_id'>>,
  ): void {
    const keys = Object.keys(patch) as Array<keyof typeof patch>;
    if (keys.length === 0) return;
    const sets = keys.map((k) => `${k} = ?`).join(', ');
    this.db.sqlite.prepare(`UPDATE users SET ${sets}, updated_at = ? WHERE id = ?`).run(...keys.map((k) => patch[k] as unknown), nowIso(), id);
  }

  /**
   * Replaces a password hash with a stronger one of the same password, only while the row still holds `from`
   * (a password changed meanwhile wins). Leaves `updated_at`: the account did not change. True when replaced.
   */
  async rehash(id: number, from: string, to: string): Promise<boolean> {
    return (await this.db.async.run(this.db.k.updateTable('users').set({ password_hash: to }).where('id', '=', id).where('password_hash', '=', from))) > 0;
  }

  /** Every group with its members, by name. */
  async groupsWithMembers(): Promise<GroupView[]> {
    const rows = await this.db.async.sql<{ name: string; id: number | null; email: string | null; username: string | null }>(
      'SELECT g.name, u.id, u.email, u.username FROM groups g LEFT JOIN user_groups ug ON ug.group_id = g.id LEFT JOIN users u ON u.id = ug.user_id ORDER BY g.name, u.email',
    );
    const out = new Map<string, GroupView>();
    for (const r of rows) {
      const g = out.get(r.name) ?? out.set(r.name, { name: r.name, members: [] }).get(r.name)!;
      if (r.id !== null) g.members.push({ id: r.id, email: r.email!, username: r.username! });
    }
    return [...out.values()];
  }

  async roleExists(id: number): Promise<boolean> {
    return (await this.db.async.first(this.db.k.selectFrom('roles').select('id').where('id', '=', id))) !== undefined;
  }

  /** Replaces the user's groups, creating missing group rows. */
  setGroups(userId: number, groups: string[]): void {
    const s = this.db.sqlite;
    s.transaction(() => {
      s.prepare('DELETE FROM user_groups WHERE user_id = ?').run(userId);
      for (const name of [...new Set(groups.map((g) => g.trim()).filter(Boolean))]) {
        s.prepare('INSERT INTO groups (name) VALUES (?) ON CONFLICT(name) DO NOTHING').run(name);
        const g = s.prepare('SELECT id FROM groups WHERE name = ?').get(name) as { id: number };
        s.prepare('INSERT INTO user_groups (user_id, group_id) VALUES (?, ?)').run(userId, g.id);
      }
    })();
  }

  delete(id: number): void {
    this.db.sqlite.prepare('DELETE FROM users WHERE id = ?').run(id);
  }

  list(q: { q?: string; role?: Role; limit?: number; offset?: number }): UserRow[] {
    const where: string[] = [];
    const args: unknown[] = [];
    if (q.q) {
      where.push("(email LIKE ? ESCAPE '\\' OR username LIKE ? ESCAPE '\\')");
      const like = `%${q.q.replace(/[\\%_]/g, (c) => '\\' + c)}%`;
      args.push(like, like);
    }
    if (q.role) {
      where.push('role = ?');
      args.push(q.role);
    }
    const sql = `SELECT * FROM users ${where.length ? 'WHERE ' + where.join(' AND ') : ''} ORDER BY id LIMIT ? OFFSET ?`;
    return this.db.sqlite.prepare(sql).all(...args, q.limit ?? 500, q.offset ?? 0) as UserRow[];
  }

  /**
   * A live account as a principal (no session), or null when it is missing or disabled. Synchronous, for the
   * callers that cannot await yet: the NFS book's `locate`, shares' `ownerPrincipal` and the apps' `people`
   * (their modules move them); every other caller awaits `principalAsync`.
   */
  principal(id: number, sessionId = ''): Principal | null {
    return readSync(this.db, (t) => this.principalRead(t, id, sessionId));
  }

  /** The same without waiting on the database (a session's or a key's first request). */
  principalAsync(id: number, sessionId = ''): Promise<Principal | null> {
    return this.db.async.read((t) => this.principalRead(t, id, sessionId));
  }

  private *principalRead(t: Tx, id: number, sessionId: string): Unit<Principal | null> {
    const { k } = this.db;
    const u = yield* t.first(k.selectFrom('users').selectAll().where('id', '=', id));
    if (!u || u.disabled) return null;
    const custom = u.custom_role_id ? yield* t.first(k.selectFrom('roles').select('permissions').where('id', '=', u.custom_role_id)) : undefined;
    const exceptions = yield* t.all(k.selectFrom('user_permissions').select(['permission', 'allowed']).where('user_id', '=', id));
    const groups = yield* t.all(
      k.selectFrom('groups as g').innerJoin('user_groups as ug', 'ug.group_id', 'g.id').select('g.name').where('ug.user_id', '=', id).orderBy('g.name'),
    );
    return {
      id: u.id,
      email: u.email,
      username: u.username,
      role: u.role as Role,
      groups: groups.map((g) => g.name),
      language: u.language,
      sessionId,
      customRole: custom ? (JSON.parse(custom.permissions) as Record<string, boolean>) : null,
      exceptions: exceptions.length ? Object.fromEntries(exceptions.map((e) => [e.permission, !!e.allowed])) : null,
    };
  }

  view(u: UserRow): UserView {
    return {
      id: u.id,
      email: u.email,
      username: u.username,
      role: u.role,
      disabled: !!u.disabled,
      language: u.language,
      groups: this.groupsOf(u.id),
      quota_bytes: u.quota_bytes,
      custom_role_id: u.custom_role_id ?? null,
      auth_driver: u.auth_driver,
      created_at: u.created_at,
      updated_at: u.updated_at,
    };
  }
}
