/**
 * The vault and encrypted folders on the server (docs/vault.md, "Server"): stores, never decrypts. A person's
 * vault is their public key and their private key wrapped twice; the server keeps SHA-256 of each `auth`
 * proof and compares in constant time, counting wrong proofs like wrong passwords (`vault_auth_failed`,
 * then 429). An encrypted folder is made through the file service as the caller, then recorded; its member
 * set changes with a new key version (owner only, `current + 1`, the caller included, every member with a
 * vault). After each change of folders or members the catalogue's roots index is read again (and the other
 * instances told), which is what every door's check reads. Everything is in the caller's tenant (docs/tenants.md):
 * a vault is its person's tenant's, a folder its storage's (the caller's), and another tenant's folder or
 * person answers as a missing one.
 */
import type { Actor, LoginThrottle, Principal } from '../auth';
import type { EncryptedRoot, EncryptedRoots, NodesRepo } from '../catalogue';
import type { TenantScope } from '../db';
import { AppError } from '../errors';
import type { FileService } from '../files';
import { safeEqual, sha256Hex } from '../lib/crypto';
import { uiPath } from '../lib/paths';
import { headerProblem } from '../lib/vault-format';
import type { VaultRepo, VaultRow } from './vault.repo';

export interface KdfParams {
  alg: 'argon2id';
  m: number;
  t: number;
  p: number;
  salt: string;
}

export interface VaultView {
  kdf: KdfParams;
  public_key: string;
  wrapped_private_key: string;
  recovery_wrapped_private_key: string;
  created_at: string;
  updated_at: string;
}

export interface FolderView {
  id: number;
  path: string;
  key_version: number;
  owner: { id: number; name: string };
  members: Array<{ id: number; name: string; display_name: string }>;
  keys: Array<{ version: number; wrapped_key: string }>;
}

/** An encrypted thumbnail's largest size (docs/vault.md, "Thumbnails"). */
export const MAX_THUMB_BYTES = 256 * 1024;

export interface VaultDeps {
  repo: VaultRepo;
  files: FileService;
  roots: EncryptedRoots;
  nodes: NodesRepo;
  throttle: LoginThrottle;
  /** A person's name in tenant `s`, or null when the account is gone (or another tenant's). */
  nameOf: (s: TenantScope, id: number) => Promise<string | null>;
}

/** The person a vault call is for: their id in their tenant (a `Principal` is one). */
export type Person = TenantScope & { id: number };

const proof = (b64u: string): string => sha256Hex(Buffer.from(b64u, 'base64url'));
const now = () => new Date().toISOString();

export class VaultService {
  constructor(private d: VaultDeps) {}

  async get(p: Person): Promise<VaultView | null> {
    const v = await this.d.repo.vault(p, p.id);
    return v ? view(v) : null;
  }

  /** Creates the caller's vault (in their tenant); one exists → `conflict`. */
  async create(p: Person, b: Omit<VaultView, 'created_at' | 'updated_at'> & { auth: string; recovery_auth: string }): Promise<VaultView> {
    const at = now();
    const row: Omit<VaultRow, 'tenant_id'> = {
      user_id: p.id,
      kdf: JSON.stringify(b.kdf),
      public_key: b.public_key,
      wrapped_private_key: b.wrapped_private_key,
      recovery_wrapped_private_key: b.recovery_wrapped_private_key,
      auth_hash: proof(b.auth),
      recovery_auth_hash: proof(b.recovery_auth),
      created_at: at,
      updated_at: at,
    };
    if (!(await this.d.repo.create(p, row))) throw new AppError('conflict', { reason: 'a vault exists already' });
    return view(row);
  }

  /**
   * A new passphrase: `auth` proves the old one (or, with `recovery`, the recovery key proves the person);
   * the private key arrives wrapped under the new passphrase with its new proof.
   */
  async rewrap(p: Person, ip: string, b: { auth: string; kdf: KdfParams; wrapped_private_key: string; new_auth: string }, recovery: boolean): Promise<void> {
    const userId = p.id;
    await this.d.throttle.check(null, ip, userId);
    const v = await this.d.repo.vault(p, userId);
    if (!v) throw new AppError('not_found', {}, { reason: 'no vault' });
    const hash = recovery ? v.recovery_auth_hash : v.auth_hash;
    if (!safeEqual(proof(b.auth), hash)) {
      await this.d.throttle.fail(null, ip, userId);
      throw new AppError('vault_auth_failed');
    }
    await this.d.throttle.succeed(null, userId);
    await this.d.repo.rewrap(p, userId, {
      kdf: JSON.stringify(b.kdf),
      wrapped_private_key: b.wrapped_private_key,
      auth_hash: proof(b.new_auth),
      updated_at: now(),
    });
  }

  /** People of the caller's tenant with a vault (the caller excluded). */
  async people(p: Person, q: string): Promise<Array<{ id: number; name: string; display_name: string; public_key: string }>> {
    return (await this.d.repo.people(p, p.id, q, 20)).map((r) => ({ id: r.id, name: r.username, display_name: r.username, public_key: r.public_key }));
  }

  /**
   * Makes the folder at `path` (through the file service, as the caller: a name inside an encrypted folder
   * must be encrypted) and records it as encrypted at key version 0; the caller then sends version 1's key
   * (`setMembers`), since the folder's id is part of what the key is wrapped with. An existing empty folder
   * is taken as it is; a non-empty one, a file, or a folder already encrypted → `conflict`.
   */
  async createFolder(a: Actor & { principal: Principal }, path: string): Promise<FolderView> {
    const me = a.principal.id;
    if (!(await this.d.repo.vault(a.principal, me))) throw new AppError('conflict', { reason: 'set up your vault first' });
    const fa = this.d.files.forActor(a);
    const t = fa.target(path, 'editor');
    if (t.rel === '') throw new AppError('forbidden', { reason: 'a storage root cannot be an encrypted folder' });
    if (this.d.roots.below(t.storage.id, t.rel).length) throw new AppError('conflict', { path, reason: 'an encrypted folder is there already' });
    const st = (await fa.exists(t.place)) ? await fa.stat(t.place) : null;
    if (st?.type === 'file') throw new AppError('conflict', { path, reason: 'a file is in the way' });
    if (st) {
      for await (const _ of fa.entries(t.place, 1)) throw new AppError('conflict', { path, reason: 'the folder is not empty' });
    } else await fa.mkdir(t.place);
    // On the storage the caller's access check resolved, so in their tenant.
    const id = await this.d.repo.createFolder(t.storage, t.rel, me, now());
    if (id === 'taken') throw new AppError('conflict', { path, reason: 'an encrypted folder is there already' });
    await this.d.roots.changed();
    return this.view(this.memberOf(a.principal, id), me);
  }

  /** The encrypted folders the person is a member of (in their tenant). */
  async folders(p: Person): Promise<FolderView[]> {
    const out: FolderView[] = [];
    for (const r of this.d.roots.of(p.id)) if (r.tenant_id === p.tenant_id) out.push(await this.view(r, p.id));
    return out;
  }

  /** One folder, for a member (anyone else, another tenant's folder too: `not_found`). */
  async folder(p: Person, id: number): Promise<FolderView> {
    return this.view(this.memberOf(p, id), p.id);
  }

  /**
   * The whole new member set with version `key_version`'s keys (owner only; the caller included; each a
   * person with a vault, once). `key_version` other than current + 1 (a replayed old set) → `conflict`.
   */
  async setMembers(p: Person, id: number, b: { key_version: number; members: Array<{ user_id: number; wrapped_key: string }> }): Promise<FolderView> {
    const userId = p.id;
    const r = this.memberOf(p, id);
    if (r.owner_id !== userId) throw new AppError('forbidden', { reason: 'only the owner changes the members' });
    const ids = b.members.map((m) => m.user_id);
    if (new Set(ids).size !== ids.length)
      throw new AppError('validation_failed', { field: 'members', reason: 'a person is named twice' }, { field: 'members' });
    if (!ids.includes(userId)) throw new AppError('validation_failed', { field: 'members', reason: 'the set must include you' }, { field: 'members' });
    // Only people of the folder's tenant have a vault here: another tenant's id is as one without a vault.
    const keys = await this.d.repo.publicKeys(r, ids);
    const without = ids.filter((x) => !keys.has(x));
    if (without.length)
      throw new AppError('validation_failed', { field: 'members', reason: 'every member needs a vault' }, { field: 'members', without_vault: without });
    await this.d.repo.setMembers(r, b.key_version, b.members);
    await this.d.roots.changed();
    return this.view(this.memberOf(p, id), userId);
  }

  /** Stores a member's encrypted thumbnail of the file at `path` (an FDV1 file of at most 256 KiB). */
  async putThumb(a: Actor, path: string, bytes: Buffer): Promise<void> {
    const { node, root } = await this.thumbTarget(a, path, 'editor');
    const problem = headerProblem(bytes, root.key_version);
    if (problem) throw new AppError('not_encrypted', { path, reason: problem }, { reason: problem });
    await this.d.repo.putThumb(node, bytes.toString('base64'), now());
  }

  /** A member's encrypted thumbnail of the file at `path`, or `not_found`. */
  async thumb(a: Actor, path: string): Promise<Buffer> {
    const { node } = await this.thumbTarget(a, path, 'viewer');
    const data = await this.d.repo.thumb(node);
    if (data === undefined) throw new AppError('not_found', { path });
    return Buffer.from(data, 'base64');
  }

  private async thumbTarget(a: Actor, path: string, need: 'viewer' | 'editor'): Promise<{ node: { id: number; tenant_id: number }; root: EncryptedRoot }> {
    const t = this.d.files.forActor(a).target(path, need);
    const root = this.d.roots.rootOf(t.storage.id, t.rel);
    if (!root) throw new AppError('not_encrypted', { path, reason: 'not in an encrypted folder' }, { reason: 'not in an encrypted folder' });
    const n = await this.d.nodes.get(t.storage, t.rel);
    if (!n || n.deleted_at || n.type !== 'file') throw new AppError('not_found', { path });
    // The node row found on the caller's storage: its thumbnail is stored and read in its tenant.
    return { node: { id: n.id, tenant_id: t.storage.tenant_id }, root };
  }

  /** Folder `id` when the person is a member and it is of their tenant; else `not_found`. */
  private memberOf(p: Person, id: number): EncryptedRoot {
    const r = this.d.roots.byId(id);
    if (!r || r.tenant_id !== p.tenant_id || !r.members.has(p.id)) throw new AppError('not_found');
    return r;
  }

  /** The folder as `userId` sees it; names are read in the folder's tenant (its members' and owner's). */
  private async view(r: EncryptedRoot, userId: number): Promise<FolderView> {
    const storage = this.d.files.catalogue.repo.ofAnyTenant(r.storage_id);
    const members = [];
    for (const id of [...r.members].sort((x, y) => x - y)) {
      const name = await this.d.nameOf(r, id);
      if (name !== null) members.push({ id, name, display_name: name });
    }
    return {
      id: r.id,
      path: uiPath(storage?.name ?? String(r.storage_id), r.rel),
      key_version: r.key_version,
      owner: { id: r.owner_id, name: (await this.d.nameOf(r, r.owner_id)) ?? '' },
      members,
      keys: await this.d.repo.keysOf(r, userId),
    };
  }
}

function view(v: Omit<VaultRow, 'tenant_id'>): VaultView {
  return {
    kdf: JSON.parse(v.kdf) as KdfParams,
    public_key: v.public_key,
    wrapped_private_key: v.wrapped_private_key,
    recovery_wrapped_private_key: v.recovery_wrapped_private_key,
    created_at: v.created_at,
    updated_at: v.updated_at,
  };
}
