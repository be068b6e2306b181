/**
 * Account management: create, update, disable, delete, and the field checks
 * of `POST /api/auth/account/check`. Every change that affects a live
 * session (disable, delete, password reset, role) reaches the session cache.
 */
import { AppError, validation } from '../errors';
import type { EventBus, ActorRef, RequestMeta } from '../events';
import { hashPassword, passwordProblem } from './passwords';
import type { Sessions } from './sessions';
import type { Refused, UserPatch, UserQuery, UserRow, UsersRepo } from './users.repo';
import type { TenantScope } from '../db';
import { ROLES, type Role, type UserView } from './types';

const EMAIL_RE = /^[^\s@]+@[^\s@]+$/;
const USERNAME_RE = /^[\p{L}\p{N}._-]{2,64}$/u;

export interface CreateUser {
  email: string;
  username?: string;
  role?: Role;
  password?: string;
  language?: string | null;
  groups?: string[];
  /** `oidc` for accounts an identity provider creates (they never sign in with a password); default `local`. */
  auth_driver?: 'local' | 'oidc';
}

export interface UpdateUser {
  email?: string;
  username?: string;
  role?: Role;
  disabled?: boolean;
  password?: string;
  language?: string | null;
  groups?: string[];
  quota_bytes?: number | null;
  /** A custom role's id, or null for none. */
  custom_role_id?: number | null;
}

export interface Ctx {
  actor?: ActorRef | null;
  request?: RequestMeta;
}

export class UsersService {
  private created: Array<(u: UserView) => Promise<unknown>> = [];
  private peopleLimit: (s: TenantScope) => number | null = () => null;

  constructor(
    private repo: UsersRepo,
    private sessions: Pick<Sessions, 'revokeUser' | 'forgetUser'>,
    private bus: EventBus,
  ) {}

  /** Runs `fn` (awaited) after every account is created, whichever door created it (the home folder). */
  onCreated(fn: (u: UserView) => Promise<unknown>): void {
    this.created.push(fn);
  }

  /** The tenant's `people` quota (null: none), counted with every insert, whichever door creates the account. */
  limitPeople(fn: (s: TenantScope) => number | null): void {
    this.peopleLimit = fn;
  }

  /** Checks an e-mail: `email_required`, `email_invalid`, `email_taken`. */
  async checkEmail(s: TenantScope, email: unknown, exceptId?: number): Promise<string> {
    if (typeof email !== 'string' || email.trim() === '') throw new AppError('email_required', {}, { field: 'email' });
    if (email.length > 254 || !EMAIL_RE.test(email.trim())) throw new AppError('email_invalid', {}, { field: 'email' });
    if (await this.repo.exists(s, 'email', email, exceptId)) throw new AppError('email_taken', {}, { field: 'email' });
    return email.trim();
  }

  /** Checks a username: `username_invalid`, `username_taken`. */
  async checkUsername(s: TenantScope, username: unknown, exceptId?: number): Promise<string> {
    if (typeof username !== 'string' || !USERNAME_RE.test(username.trim())) throw new AppError('username_invalid', {}, { field: 'username' });
    if (await this.repo.exists(s, 'username', username, exceptId)) throw new AppError('username_taken', {}, { field: 'username' });
    return username.trim();
  }

  /** A free username derived from an e-mail's local part. */
  private async deriveUsername(s: TenantScope, email: string): Promise<string> {
    const base =
      email
        .split('@')[0]
        .replace(/[^\p{L}\p{N}._-]/gu, '')
        .slice(0, 60) || 'user';
    let name = base.length >= 2 ? base : `${base}_1`;
    for (let i = 2; await this.repo.exists(s, 'username', name); i++) name = `${base}${i}`;
    return name;
  }

  /** Creates an account in the tenant `s`. */
  async create(s: TenantScope, input: CreateUser, ctx: Ctx = {}): Promise<UserView> {
    const email = await this.checkEmail(s, input.email);
    const username = input.username === undefined || input.username === '' ? await this.deriveUsername(s, email) : await this.checkUsername(s, input.username);
    const role = input.role ?? 'user';
    if (!ROLES.includes(role)) throw validation('role');
    let hash: string | null = null;
    if (input.password !== undefined) {
      const p = passwordProblem(input.password);
      if (p) throw validation('password', p);
      hash = await hashPassword(input.password);
    }
    const id = await this.repo.insert(
      s,
      { email, username, role, password_hash: hash, language: input.language ?? null, auth_driver: input.auth_driver ?? 'local' },
      input.groups,
      this.peopleLimit(s),
    );
    const view = await this.get(s, id);
    await this.bus.emit(s, 'audit', { action: 'user.create', actor: ctx.actor, request: ctx.request, resource: `user:${id}`, meta: { email, role } });
    for (const fn of this.created) await fn(view);
    return view;
  }

  async get(s: TenantScope, id: number): Promise<UserView> {
    const u = await this.repo.view(s, id);
    if (!u) throw new AppError('not_found');
    return u;
  }

  async update(s: TenantScope, id: number, patch: UpdateUser, ctx: Ctx = {}): Promise<UserView> {
    if (!(await this.repo.byId(s, id))) throw new AppError('not_found');
    const row: UserPatch = {};
    if (patch.email !== undefined) row.email = await this.checkEmail(s, patch.email, id);
    if (patch.username !== undefined) row.username = await this.checkUsername(s, patch.username, id);
    if (patch.role !== undefined) {
      if (!ROLES.includes(patch.role)) throw validation('role');
      row.role = patch.role;
    }
    if (patch.language !== undefined) row.language = patch.language;
    if (patch.quota_bytes !== undefined) row.quota_bytes = patch.quota_bytes;
    if (patch.custom_role_id !== undefined) {
      if (patch.custom_role_id !== null && !(await this.repo.roleExists(s, patch.custom_role_id))) throw validation('custom_role_id', 'no such role');
      row.custom_role_id = patch.custom_role_id;
    }
    if (patch.password !== undefined) {
      const p = passwordProblem(patch.password);
      if (p) throw validation('password', p);
      row.password_hash = await hashPassword(patch.password);
    }
    if (patch.disabled !== undefined) row.disabled = patch.disabled ? 1 : 0;
    // The last-admin rule is decided in the write's own unit, on the rows as they are then.
    const u = accepted(await this.repo.update(s, id, row, patch.groups));
    if (patch.disabled === true) {
      await this.sessions.revokeUser(s, id);
      if (!u.disabled)
        await this.bus.emit(s, 'audit', { action: 'user.disable', actor: ctx.actor, request: ctx.request, resource: `user:${id}`, meta: { email: u.email } });
    } else if (patch.password !== undefined && ctx.actor?.id !== id) {
      await this.sessions.revokeUser(s, id);
    } else {
      this.sessions.forgetUser(id);
    }
    if (patch.disabled === false && u.disabled)
      await this.bus.emit(s, 'audit', { action: 'user.enable', actor: ctx.actor, request: ctx.request, resource: `user:${id}`, meta: { email: u.email } });
    return this.get(s, id);
  }

  async delete(s: TenantScope, id: number, ctx: Ctx = {}): Promise<void> {
    const u = accepted(await this.repo.delete(s, id));
    // Its session rows went with it (cascade); this drops the cached principals and keys.
    await this.sessions.revokeUser(s, id);
    await this.bus.emit(s, 'audit', { action: 'user.delete', actor: ctx.actor, request: ctx.request, resource: `user:${id}`, meta: { email: u.email } });
  }

  list(s: TenantScope, q: UserQuery): Promise<UserView[]> {
    return this.repo.listViews(s, q);
  }
}

/** The row a repository change answered, or its refusal as the error: the last enabled admin must stay. */
function accepted(r: UserRow | Refused): UserRow {
  if (r === 'not_found') throw new AppError('not_found');
  if (r === 'last_admin') throw new AppError('conflict', { reason: 'last_admin' }, { reason: 'last_admin' }, 'the last admin must stay');
  return r;
}
