/**
 * API keys: what phones, scripts, the gateways and agents sign in with, able
 * to do less than their owner. A key has verbs (what it may do at all) and an
 * optional folder root (the only part of the tree it may reach); its rights
 * are its verbs intersected with its owner's permissions, checked at each use.
 * The token is `fdk_<id>_<secret>`: the id addresses the row (an S3 client's
 * access key id), only a hash of the secret is kept, the secret is shown once.
 * An unknown id costs the same hash and compare as a wrong secret.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { AppError } from '../errors';
import { DEFAULT_TENANT, type Db, type TenantScope } from '../db';
import type { ApiKeyView, KeyVerb } from '../contract';
import type { EventBus, RequestMeta } from '../events';
import { safeEqual } from '../lib/crypto';
import type { Principal } from './types';
import type { UsersRepo } from './users.repo';
import { KeysRepo, type KeyRow } from './keys.repo';

/** Every verb a key may carry (docs/auth.md). */
export const VERBS = {
  'files:read': 'browse, search, preview and download what the key may reach',
  'files:write': 'upload, create, rename, move, copy and delete there',
  'shares:write': 'create, list and revoke share links and file requests',
  'ai.use': 'the agent API (MCP tools)',
  admin: 'admin routes, also under /api/ai/admin (only on an admin’s key, never with a root)',
} as const satisfies Record<KeyVerb, string>;
export type Verb = KeyVerb;

/** What a request signed with a key may do: checked by the file service and the route gate. */
export interface KeyScope {
  id: number;
  name: string;
  verbs: Verb[];
  /** The only folder the key reaches, or null for everything its owner reaches. */
  root: { storage_id: number; rel: string } | null;
  expires_at: string | null;
}

export type { KeyRow };

const TOKEN = /^fdk_(\d{1,12})_([A-Za-z0-9_-]{43})$/;
/** Resolved keys are reused this long (a revoke drops them at once). */
const CACHE_MS = 10_000;
const CACHE_MAX = 10_000;
/** `last_used_*` is written at most this often per key. */
const TOUCH_MS = 60_000;
/** A key used from a new address, or again after this long, leaves an audit row. */
const AUDIT_IDLE_MS = 3_600_000;

const hashOf = (secret: string): string => createHash('sha256').update(secret).digest('hex');
/** Compared against when the id is unknown, so that costs what a wrong secret costs. */
const DUMMY = hashOf('no such key');

export const isKeyToken = (token: string): boolean => token.startsWith('fdk_');

/**
 * Where a key is looked for: the request's tenant, or (a gateway's sign-in, which has no tenant before the key)
 * every tenant it may be of: the key row then says its tenant.
 */
export type KeyTenants = TenantScope | readonly TenantScope[];
const among = (t: KeyTenants): readonly TenantScope[] => ('tenant_id' in t ? [t] : t);
const holds = (t: KeyTenants, tenantId: number): boolean => among(t).some((x) => x.tenant_id === tenantId);

export class Keys {
  private cache = new Map<string, { scope: KeyScope; principal: Principal; at: number; exp: number }>();
  private touched = new Map<number, { at: number; ip: string }>();
  private repo: KeysRepo;

  /** `secretKey`: the install's key; S3 secrets are derived from it (see `s3Credentials`). */
  constructor(
    db: Db,
    private users: UsersRepo,
    private bus: EventBus,
    private secretKey: Buffer,
  ) {
    this.repo = new KeysRepo(db);
  }

  /**
   * Makes a key for `userId` and returns it with its token (shown once). The
   * `admin` verb needs an admin owner (`validation_failed` otherwise). Audited
   * `api_key.create`.
   */
  async create(
    by: Principal,
    input: { userId: number; name: string; verbs: Verb[]; root: KeyScope['root']; expiresAt: string | null; machineId?: string | null },
    request?: RequestMeta,
  ): Promise<{ key: KeyRow; token: string }> {
    const owner = await this.users.byId(by, input.userId);
    if (!owner) throw new AppError('not_found', { id: input.userId });
    if (input.verbs.includes('admin') && owner.role !== 'admin')
      throw new AppError('validation_failed', { field: 'verbs', reason: 'only an admin’s key can carry admin' }, { field: 'verbs' });
    const secret = randomBytes(32).toString('base64url');
    const id = await this.repo.insert(by, {
      user_id: input.userId,
      name: input.name,
      secret_hash: hashOf(secret),
      verbs: JSON.stringify([...new Set(input.verbs)].sort()),
      root_storage_id: input.root?.storage_id ?? null,
      root_rel: input.root?.rel ?? null,
      machine_id: input.machineId ?? null,
      created_by: by.id,
      created_at: new Date().toISOString(),
      expires_at: input.expiresAt,
    });
    const key = (await this.repo.byId(by, id))!;
    await this.bus.emit(by, 'audit', {
      action: 'api_key.create',
      actor: { id: by.id, email: by.email },
      request,
      resource: `api_key:${id}`,
      meta: { user_id: input.userId, name: input.name, verbs: input.verbs, root: input.root, expires_at: input.expiresAt },
    });
    return { key, token: `fdk_${id}_${secret}` };
  }

  /** The key, or undefined. */
  byId(s: TenantScope, id: number): Promise<KeyRow | undefined> {
    return this.repo.byId(s, id);
  }

  /** A person's keys (every key of the tenant when `userId` is null), newest first. */
  list(s: TenantScope, userId: number | null): Promise<KeyRow[]> {
    return this.repo.list(s, userId);
  }

  /** Revokes a key (idempotent). Audited `api_key.revoke` the first time. */
  async revoke(by: Principal, id: number, request?: RequestMeta): Promise<KeyRow> {
    const { row, revoked } = await this.repo.revoke(by, id, new Date().toISOString());
    if (!row) throw new AppError('not_found', { id });
    if (revoked) {
      this.forget(id);
      await this.bus.emit(by, 'audit', {
        action: 'api_key.revoke',
        actor: { id: by.id, email: by.email },
        request,
        resource: `api_key:${id}`,
        meta: { user_id: row.user_id, name: row.name },
      });
    }
    return row;
  }

  /**
   * What `resolve` answers for `token` in tenant `s` when it resolved the token less than the cache's lifetime
   * ago (dropped on every invalidation), recorded as a use like `resolve` does, without waiting for anything:
   * null for another tenant's key; undefined when not cached: ask `resolve`.
   */
  recent(token: string, request?: RequestMeta, s: KeyTenants = DEFAULT_TENANT): { principal: Principal; scope: KeyScope } | null | undefined {
    const now = Date.now();
    const hit = this.cache.get(token);
    if (!hit || now - hit.at >= CACHE_MS || hit.exp <= now) return undefined;
    if (!holds(s, hit.principal.tenant_id)) return null;
    this.touch(hit.scope.id, hit.principal, request, now);
    return hit;
  }

  /**
   * The owner and scope of a live key token of tenant `s` (the request's: another tenant's key is not
   * found), or null for a malformed, unknown, wrong, revoked or expired token or a disabled owner (all
   * answered alike). The gateways pass every active tenant: the key row says which it is of.
   */
  async resolve(token: string, request?: RequestMeta, s: KeyTenants = DEFAULT_TENANT): Promise<{ principal: Principal; scope: KeyScope } | null> {
    const hit = this.recent(token, request, s);
    if (hit !== undefined) return hit;
    const now = Date.now();
    const row = await this.check(s, token, now);
    // A machine-bound key only signs its desktop in (desktopLogin): it is no bearer credential.
    if (!row || row.machine_id !== null) return null;
    const principal = await this.users.principal(row, row.user_id, `key:${row.id}`);
    if (!principal) return null;
    const scope = scopeOf(row);
    this.cache.delete(token);
    this.cache.set(token, { scope, principal, at: now, exp: row.expires_at ? Date.parse(row.expires_at) : Infinity });
    for (const k of this.cache.keys()) {
      if (this.cache.size <= CACHE_MAX) break;
      this.cache.delete(k);
    }
    this.touch(row.id, principal, request, now);
    return { principal, scope };
  }

  /**
   * Mints the key a desktop shell pairs with: bound to its machine id, no
   * verbs; it signs that desktop in at `desktopLogin` and nothing else.
   */
  async createDevice(p: Principal, machineId: string, label: string, request?: RequestMeta): Promise<{ key_id: number; key: string }> {
    const { key, token } = await this.create(p, { userId: p.id, name: label, verbs: [], root: null, expiresAt: null, machineId }, request);
    return { key_id: key.id, key: token };
  }

  /**
   * The owner of the live machine-bound key `token` for `machineId`, or null.
   * A desktop paired before keys had ids presents its old key, checked against
   * the hash of machine id and key it was stored with.
   */
  async desktopOwner(token: string, machineId: string): Promise<number | null> {
    const now = Date.now();
    // A desktop's installation is single-tenant: its keys are tenant 1's.
    let row = TOKEN.test(token) ? await this.check(DEFAULT_TENANT, token, now) : undefined;
    if (!row) {
      const legacy = await this.repo.legacy(DEFAULT_TENANT, machineId, hashOf(`${machineId}\n${token}`));
      row = legacy && !legacy.revoked_at ? legacy : undefined;
    }
    if (!row || row.machine_id === null || row.machine_id !== machineId) return null;
    await this.repo.used(row, row.id, new Date(now).toISOString());
    return row.user_id;
  }

  /** The live row of a well-formed token whose secret matches (same cost for an unknown id), or undefined. */
  private async check(s: KeyTenants, token: string, now: number): Promise<KeyRow | undefined> {
    const m = TOKEN.exec(token);
    const row = m ? await this.repo.byIdAmong(among(s), Number(m[1])) : undefined;
    const good = safeEqual(hashOf(m?.[2] ?? ''), row?.secret_hash ?? DUMMY);
    if (!good || !row || row.revoked_at || (row.expires_at && Date.parse(row.expires_at) <= now)) return undefined;
    return row;
  }

  /**
   * The S3 credentials of a key: the access key id names the key
   * (`fdk_<id>`); the secret access key is derived from the install's key and
   * the stored hash of the key's secret, so SigV4 can be checked (it needs
   * the secret itself) while only a hash is stored. Shown with the token,
   * once; revoking the key revokes them.
   */
  s3Credentials(row: KeyRow): { access_key_id: string; secret_access_key: string } {
    return {
      access_key_id: `fdk_${row.id}`,
      secret_access_key: createHmac('sha256', this.secretKey).update(`s3:${row.id}:${row.secret_hash}`).digest('base64url'),
    };
  }

  /**
   * The owner, scope and S3 secret of a live bearer key named by its S3
   * access key id, or null (malformed, unknown, revoked, expired, a desktop
   * key, a disabled owner, a key of none of `tenants`). The caller checks the request's signature with
   * the secret. An access key id is unique over the installation: the key row says its tenant.
   */
  async byAccessKey(
    accessKeyId: string,
    request: RequestMeta | undefined,
    tenants: KeyTenants,
  ): Promise<{ principal: Principal; scope: KeyScope; secret: string; used: () => void } | null> {
    const m = /^fdk_(\d{1,12})$/.exec(accessKeyId);
    const row = m ? await this.repo.byIdAmong(among(tenants), Number(m[1])) : undefined;
    const now = Date.now();
    if (!row || row.revoked_at || row.machine_id !== null || (row.expires_at && Date.parse(row.expires_at) <= now)) return null;
    const principal = await this.users.principal(row, row.user_id, `key:${row.id}`);
    if (!principal) return null;
    // Recorded only once the caller has checked the signature: an access key id alone is guessable.
    const used = () => this.touch(row.id, principal, request, Date.now());
    return { principal, scope: scopeOf(row), secret: this.s3Credentials(row).secret_access_key, used };
  }

  /** Drops cached keys of a person whose rights changed. */
  forgetUser(userId: number): void {
    for (const [t, c] of this.cache) if (c.principal.id === userId) this.cache.delete(t);
  }

  /** Drops every cached key (a custom role changed). */
  forgetAll(): void {
    this.cache.clear();
  }

  private forget(id: number): void {
    for (const [t, c] of this.cache) if (c.scope.id === id) this.cache.delete(t);
  }

  /** Records the key's last use (at most once a minute) and audits a use from a new address or after an hour idle. */
  private touch(id: number, p: Principal, request: RequestMeta | undefined, now: number): void {
    const ip = request?.ip ?? '';
    const last = this.touched.get(id);
    if (last && last.ip === ip && now - last.at < TOUCH_MS) return;
    this.touched.delete(id);
    this.touched.set(id, { at: now, ip });
    for (const k of this.touched.keys()) {
      if (this.touched.size <= CACHE_MAX) break;
      this.touched.delete(k);
    }
    void this.recordUse(id, p, request, now, ip).catch(() => undefined);
  }

  /** Off the request's path: the use is informational, and a busy database must not fail the request. */
  private async recordUse(id: number, p: Principal, request: RequestMeta | undefined, now: number, ip: string): Promise<void> {
    const row = await this.repo.byId(p, id);
    await this.repo.used(p, id, new Date(now).toISOString(), ip || null);
    const idle = !row?.last_used_at || now - Date.parse(row.last_used_at) > AUDIT_IDLE_MS;
    if (idle || row?.last_used_ip !== (ip || null)) {
      await this.bus.emit(p, 'audit', { action: 'api_key.use', actor: { id: p.id, email: p.email }, request, resource: `api_key:${id}`, meta: { key_id: id } });
    }
  }
}

/** A key row as the keys page shows it; `root` is its folder as a UI path (the caller knows storage names). */
export function keyView(row: KeyRow, root: string | null, now = Date.now()): ApiKeyView {
  const state = row.revoked_at ? 'revoked' : row.expires_at && Date.parse(row.expires_at) <= now ? 'expired' : 'active';
  return {
    id: row.id,
    user_id: row.user_id,
    name: row.name,
    kind: row.machine_id === null ? 'key' : 'desktop',
    verbs: JSON.parse(row.verbs) as Verb[],
    root,
    machine_id: row.machine_id,
    created_at: row.created_at,
    expires_at: row.expires_at,
    last_used_at: row.last_used_at,
    last_used_ip: row.last_used_ip,
    revoked_at: row.revoked_at,
    state,
  };
}

/** The scope a key row grants. */
export function scopeOf(row: KeyRow): KeyScope {
  const root = row.root_storage_id !== null ? { storage_id: row.root_storage_id, rel: row.root_rel ?? '' } : null;
  return { id: row.id, name: row.name, verbs: JSON.parse(row.verbs) as Verb[], root, expires_at: row.expires_at };
}

/** Checks a verb list from a request: known verbs only, at least one (`validation_failed` naming the bad one). */
export function checkVerbs(v: unknown): Verb[] {
  if (!Array.isArray(v) || v.length === 0) throw new AppError('validation_failed', { field: 'verbs', reason: 'at least one verb' }, { field: 'verbs' });
  for (const x of v)
    if (typeof x !== 'string' || !(x in VERBS))
      throw new AppError(
        'validation_failed',
        { field: 'verbs', reason: `unknown verb ${String(x).slice(0, 40)}` },
        { field: 'verbs', verb: String(x).slice(0, 40) },
      );
  return v as Verb[];
}
