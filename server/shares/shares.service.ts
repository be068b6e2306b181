/**
 * Share links and file requests: creation under the expiry ceiling, the
 * owner's list, revocation, the public state of a token, the PIN gate (link-pin.ts) and the
 * short-lived download token. Download and upload slots are claimed here; the
 * HTTP layer decides when a serve has failed before its first byte.
 */
import { actorRef, linkActor, requirePermission, type Actor, type Auth, type Principal } from '../auth';
import type { DropSettings, LinkMetadata, ShareView } from '../contract';
import type { Catalogue, StorageRow } from '../catalogue';
import { mimeOf } from '../catalogue';
import type { EventBus, RequestMeta } from '../events';
import { AppError, isAppError } from '../errors';
import type { ActorFiles, FileService } from '../files';
import { randomDigits, randomToken } from '../lib/crypto';
import { formatDuration } from '../lib/duration';
import { baseName, isWithin, parseSharePath, uiPath } from '../lib/paths';
import type { SettingsStore } from '../settings';
import { DROP_DEFAULTS, dropSettingsOf, shareState, shareView } from './share-views';
import { SharesRepo, shareStorage, type NewShare, type ShareRow } from './shares.repo';
import { LinkPinGate } from './link-pin';
import type { TenantScope } from '../db';
import { sentShareUrl, shareUrl } from './share-urls';
export const SWEEP_AFTER_MS = 7 * 86_400_000;
const DAY = 86_400_000;
const TOKEN_RE = /^[A-Za-z0-9_-]{16,64}$/;

export type { DropSettings, ShareView };

export interface CreateShareInput {
  path: string;
  kind?: 'link' | 'drop';
  /** Milliseconds of life, already parsed. */
  ttlMs?: number;
  expires_at?: string;
  max_downloads?: number;
  pin?: string;
  password?: boolean;
  comment?: string;
  drop_settings?: Partial<DropSettings>;
  max_uploads?: number;
}

/** What an app asks for when it opens a public page (host method `pages.create`; docs/app-plugins.md). */
export interface CreateAppLinkInput {
  plugin: string;
  /** The app's view the page shows. */
  page: string;
  title?: string;
  /** UI paths of the files the page exposes (one storage). */
  paths: string[];
  pin?: string;
  expires_at?: string;
  max_visits?: number;
}

/** One file an app link exposes: `ref` names it in the public routes, `rel` is on the link's storage. */
export interface AppLinkFile {
  ref: string;
  rel: string;
}

/** At most this many files on one app page. */
export const APP_LINK_MAX_FILES = 50;

/** A token that is live right now, with what it points at. */
export interface OpenShare {
  share: ShareRow;
  owner: Principal;
  storage: StorageRow;
  /** The file service as the link sees it: its creator's rights, confined to the shared item. */
  files: ActorFiles;
  /** The link as an actor for one request (its visitor stays anonymous in events). */
  actor(request?: RequestMeta): Actor;
}

/**
 * A claimed download slot. `settle` is called once, with the bytes that
 * reached the visitor: a serve that failed before its first byte gives the
 * slot back (spec: Download counting); anything else keeps it spent.
 */
export interface DownloadSlot {
  /** Resolves once a slot given back is written, so a refusal answered after it leaves the slot free for the next request. */
  settle(bytesSent: number, size: number): Promise<void>;
}

export interface SharesOptions {
  repo: SharesRepo;
  auth: Auth;
  catalogue: Catalogue;
  files: FileService;
  settings: SettingsStore;
  bus: EventBus;
  secretKey: Buffer;
  /** `SERVICE_PUBLIC_URL` without a trailing slash ('' = the request's own origin). */
  publicUrl: string;
  /** Called when a share stops being usable (revoked), to drop its cached ZIP. */
  onEnded?: (shareId: number) => void;
  /** Called after a link is created (the ZIP warmer pre-builds folder archives). */
  onCreated?: (row: ShareRow) => void;
  /** The tenant's `links` quota (auth/tenant-quotas.ts; null: none), counted with the insert; none in single-tenant mode. */
  linkLimit?: (t: TenantScope) => number | null;
  /** Told when a suspended link is re-enabled (the guard forgets what it counted). */
  onResumed?: (row: ShareRow) => Promise<void> | undefined;
  /** Multi-tenant mode: where a tenant's links start for someone elsewhere (auth's `TenantDirectory.address`). */
  tenantAddress?: (t: TenantScope, installation: string) => string;
}

export class SharesService {
  private readonly pin: LinkPinGate;

  constructor(private o: SharesOptions) {
    this.pin = new LinkPinGate(o.repo, o.secretKey);
  }

  get repo(): SharesRepo {
    return this.o.repo;
  }

  /**
   * Creates a link (or a file request with `kind: 'drop'`). Needs at least
   * editor on the item (a drop also a writable storage: `read_only`). The
   * expiry is clamped to `share_max_ttl_days`; `password: true` generates an
   * 8-digit PIN returned once. Audited as `share.create`.
   */
  async create(a: Actor, input: CreateShareInput, origin: string): Promise<ShareView & { pin?: string }> {
    const kind = input.kind ?? 'link';
    if (a.kind === 'system') throw new AppError('forbidden');
    const { storage: key, rel } = parseSharePath(input.path);
    if (key === null) throw new AppError('bad_path', {}, { reason: 'a storage is required' });
    const fa = this.o.files.forActor(a);
    const path = uiPath(key, rel);
    // A drop writes (a read-only storage refuses it); a link only reads, yet needs editor rights on the item.
    const r = fa.target(path, kind === 'drop' ? 'editor' : 'viewer');
    if (kind === 'link') fa.target(path, 'editor', { ignoreReadOnly: true, permission: 'shares:write' });
    requirePermission(a, 'shares:write');
    const entry = await fa.stat(r.place);
    if (kind === 'drop' && entry.type !== 'dir')
      throw new AppError('validation_failed', { field: 'path', reason: 'a file request needs a folder' }, { field: 'path' });
    // Inside an encrypted folder only files are shared, by a link whose key stays in the URL's fragment (docs/vault.md).
    if (entry.type === 'dir' && this.encrypted(r.storage.id, r.rel)) throw new AppError('encrypted', { path, conflict: true });

    const now = Date.now();
    const { expiresAt, clamped } = this.expiry(now, input);
    let pin = input.pin;
    if (input.password) pin = randomDigits(8);
    const token = randomToken(24);
    const drop = kind === 'drop' ? { ...DROP_DEFAULTS, ...stripUndefined(input.drop_settings ?? {}) } : null;
    if (drop) drop.allowed_ext = [...new Set(drop.allowed_ext.map((e) => e.replace(/^\./, '').toLowerCase()).filter(Boolean))];
    const row = await this.insert(a.principal, {
      token,
      kind,
      owner_id: a.principal.id,
      storage_id: r.storage.id,
      rel: r.rel,
      is_dir: entry.type === 'dir' ? 1 : 0,
      ttl: expiresAt === null ? null : formatDuration(Math.max(0, Math.round((expiresAt - now) / 1000) * 1000)),
      expires_at: expiresAt === null ? null : new Date(expiresAt).toISOString(),
      expiry_clamped: clamped ? 1 : 0,
      max_downloads: kind === 'link' ? (input.max_downloads ?? null) : null,
      max_uploads: kind === 'drop' ? (input.max_uploads ?? null) : null,
      pin_hash: pin ? this.pin.hash(token, pin) : null,
      comment: input.comment ?? null,
      drop_settings: drop ? JSON.stringify(drop) : null,
      created_at: new Date(now).toISOString(),
    });
    await this.o.bus.emit(row, 'audit', {
      action: 'share.create',
      actor: actorRef(a),
      request: a.request,
      resource: this.sharePath(row),
      meta: { share_id: row.id, kind, max_downloads: row.max_downloads, expires_at: row.expires_at, pin: !!pin },
    });
    this.o.onCreated?.(row);
    const view = await this.present(row, origin);
    return input.password ? { ...view, pin } : view;
  }

  /**
   * Opens a public app page (kind `app`): the same rule as a link (editor on every file, `shares:write`), the
   * same expiry ceiling, PIN hash and lock, revocation (storage deleted, creator disabled). Files only, all on
   * one storage, at most 50; the row's own path is the first file. `max_visits` caps the page's openings
   * (kept in `max_downloads`/`downloads`). Audited as `share.create` with the app.
   */
  async createApp(a: Actor, input: CreateAppLinkInput, origin: string): Promise<ShareView> {
    if (a.kind === 'system' || a.kind === 'link') throw new AppError('forbidden');
    if (!Array.isArray(input.paths) || input.paths.length === 0)
      throw new AppError('validation_failed', { field: 'paths', reason: 'at least one file' }, { field: 'paths' });
    if (input.paths.length > APP_LINK_MAX_FILES) throw new AppError('too_many_paths', { max: APP_LINK_MAX_FILES }, { max: APP_LINK_MAX_FILES });
    if (input.max_visits !== undefined && (!Number.isInteger(input.max_visits) || input.max_visits < 1))
      throw new AppError('validation_failed', { field: 'max_visits', reason: 'a positive whole number' }, { field: 'max_visits' });
    if (input.pin !== undefined && !/^[0-9A-Za-z]{4,32}$/.test(input.pin))
      throw new AppError('validation_failed', { field: 'pin', reason: '4 to 32 letters or digits' }, { field: 'pin' });
    const fa = this.o.files.forActor(a);
    const targets = [];
    for (const p of input.paths) {
      if (typeof p !== 'string') throw new AppError('validation_failed', { field: 'paths', reason: 'a list of paths' }, { field: 'paths' });
      const r = fa.target(p, 'viewer');
      fa.target(r.place, 'editor', { ignoreReadOnly: true, permission: 'shares:write' });
      if ((await fa.stat(r.place)).type !== 'file')
        throw new AppError('validation_failed', { field: 'paths', reason: 'an app page exposes files, not folders' }, { field: 'paths' });
      targets.push(r);
    }
    requirePermission(a, 'shares:write');
    if (new Set(targets.map((t) => t.storage.id)).size > 1)
      throw new AppError('validation_failed', { field: 'paths', reason: 'all files on one storage' }, { field: 'paths' });
    const files: AppLinkFile[] = targets.map((t, i) => ({ ref: `f${i + 1}`, rel: t.rel }));
    const now = Date.now();
    const { expiresAt, clamped } = this.expiry(now, { path: '', expires_at: input.expires_at });
    const token = randomToken(24);
    const row = await this.insert(a.principal, {
      token,
      kind: 'app',
      owner_id: a.principal.id,
      storage_id: targets[0].storage.id,
      rel: targets[0].rel,
      is_dir: 0,
      ttl: expiresAt === null ? null : formatDuration(Math.max(0, Math.round((expiresAt - now) / 1000) * 1000)),
      expires_at: expiresAt === null ? null : new Date(expiresAt).toISOString(),
      expiry_clamped: clamped ? 1 : 0,
      max_downloads: input.max_visits ?? null,
      max_uploads: null,
      pin_hash: input.pin ? this.pin.hash(token, input.pin) : null,
      comment: null,
      drop_settings: null,
      created_at: new Date(now).toISOString(),
      plugin_name: input.plugin,
      page_id: input.page,
      title: input.title ?? null,
      app_files: JSON.stringify(files),
    });
    await this.o.bus.emit(row, 'audit', {
      action: 'share.create',
      actor: actorRef(a),
      request: a.request,
      resource: this.sharePath(row),
      meta: {
        share_id: row.id,
        kind: 'app',
        plugin: input.plugin,
        page: input.page,
        files: files.length,
        max_visits: row.max_downloads,
        expires_at: row.expires_at,
        pin: !!input.pin,
      },
    });
    return this.present(row, origin);
  }

  /**
   * Stores a share in its owner's tenant and reads it back. Its storage must be that tenant's: another
   * tenant's storage is refused as a missing path would be (`not_found`).
   */
  private async insert(owner: TenantScope, s: NewShare): Promise<ShareRow> {
    const id = await this.o.repo.insert(owner, s, this.o.linkLimit?.(owner) ?? null);
    const row = id === undefined ? undefined : await this.o.repo.byId(owner, id);
    if (!row) throw new AppError('not_found');
    return row;
  }

  /** The files an app link exposes (none for other links). */
  appFiles(s: ShareRow): AppLinkFile[] {
    if (s.kind !== 'app' || !s.app_files) return [];
    try {
      const v = JSON.parse(s.app_files) as AppLinkFile[];
      return Array.isArray(v) ? v.filter((f) => typeof f?.ref === 'string' && typeof f?.rel === 'string') : [];
    } catch {
      return [];
    }
  }

  /**
   * The row and public state of a token without opening it (the app page's state route reports expired,
   * revoked and suspended links instead of refusing them): `not_found` for an unknown or malformed token,
   * another kind than `kind`, or a capped link; a token whose storage was deleted is `revoked` with no row.
   * `owner`: its creator as read for the state (null: deleted or disabled, or no row). The token is looked up
   * in `scope` (another tenant's token is unknown).
   */
  async peek(
    scope: TenantScope,
    token: string,
    kind: ShareRow['kind'],
  ): Promise<{ share: ShareRow | null; state: Exclude<ShareView['state'], 'capped'>; owner: Principal | null }> {
    const share = typeof token === 'string' && TOKEN_RE.test(token) ? await this.o.repo.byToken(scope, token) : undefined;
    if (!share && typeof token === 'string' && TOKEN_RE.test(token) && (await this.o.repo.tombstoned(scope, token, kind)))
      return { share: null, state: 'revoked', owner: null };
    if (!share || share.kind !== kind) throw new AppError('not_found');
    const owner = await this.ownerPrincipal(share);
    const state = this.stateWith(share, owner);
    if (state === 'capped') throw new AppError('not_found', { reason: 'capped' });
    return { share, state, owner };
  }

  /** Whether the row's PIN gate is locked now (five wrong answers), and until when (link-pin.ts). */
  pinLockedUntil(s: ShareRow): string | null {
    return this.pin.lockedUntil(s);
  }

  /** Whether `dt` passes the PIN gate without counting a failure (link-pin.ts). */
  unlocked(s: ShareRow, dt?: string): boolean {
    return this.pin.unlocked(s, dt);
  }

  /** The caller's shares, newest first (a key sees those inside its root only). */
  async list(a: Actor, origin: string): Promise<ShareView[]> {
    if (a.kind === 'system') return [];
    const [uses, rows, owner] = await Promise.all([
      this.o.repo.submissionCounts(a.principal, a.principal.id),
      this.o.repo.list(a.principal, a.principal.id),
      this.o.auth.repo.principal(a.principal, a.principal.id),
    ]);
    return Promise.all(rows.filter((s) => this.reaches(a, s)).map((s) => this.present(s, origin, { owner, submissions: uses.get(s.id) ?? 0 })));
  }

  /** Whether a key's root holds the share's item (other actors: always). */
  private reaches(a: Actor, s: ShareRow): boolean {
    const root = a.kind === 'key' ? a.key.root : null;
    return !root || (s.storage_id === root.storage_id && isWithin(s.rel, root.rel));
  }

  /** Whether `a` may manage share `s`: its owner or an admin, within a key's root. */
  manages(a: Actor, s: ShareRow): boolean {
    return a.kind !== 'system' && (s.owner_id === a.principal.id || a.principal.role === 'admin') && this.reaches(a, s);
  }

  /**
   * Revokes by id (or token): expiry set to now, `revoked_at` written, audit
   * `share.revoke`. Owner or admin; anyone else gets `not_found`. Idempotent.
   */
  async revoke(a: Actor, idOrToken: string): Promise<ShareView> {
    const row = await this.managed(a, idOrToken);
    if (await this.o.repo.revoke(row, row.id, new Date().toISOString())) {
      await this.o.bus.emit(row, 'audit', {
        action: 'share.revoke',
        actor: actorRef(a),
        request: a.request,
        resource: this.sharePath(row),
        meta: { share_id: row.id, kind: row.kind },
      });
      this.o.onEnded?.(row.id);
    }
    return this.present((await this.o.repo.byId(row, row.id))!, '');
  }

  /**
   * Suspends a live link (uplink guard): stored, announced as `share.suspended`
   * (bell for its creator and the admins, webhooks) and audited. Once only.
   */
  async suspend(row: ShareRow, reason: 'addresses' | 'accelerator', meta: { addresses?: number; ip?: string; ua?: string }): Promise<boolean> {
    const at = new Date().toISOString();
    if (!(await this.o.repo.suspend(row, row.id, reason, at))) return false;
    const path = this.sharePath(row);
    await this.o.bus.emit(row, 'share.suspended', { share_id: row.id, owner_id: row.owner_id, token: row.token, path, reason, suspended_at: at, ...meta });
    await this.o.bus.emit(row, 'audit', {
      action: 'share.suspend',
      resource: path,
      request: { ip: meta.ip ?? null, ua: meta.ua ?? null },
      meta: { share_id: row.id, reason },
    });
    return true;
  }

  /** Re-enables a suspended link (owner or admin; anyone else gets `not_found`). Idempotent. */
  async resume(a: Actor, idOrToken: string): Promise<ShareView> {
    const row = await this.managed(a, idOrToken);
    if (await this.o.repo.resume(row, row.id)) {
      await this.o.bus.emit(row, 'audit', {
        action: 'share.resume',
        actor: actorRef(a),
        request: a.request,
        resource: this.sharePath(row),
        meta: { share_id: row.id },
      });
      await this.o.onResumed?.(row);
    }
    return this.present((await this.o.repo.byId(row, row.id))!, '');
  }

  /**
   * A share `a` manages, by its id or token in `a`'s tenant (`not_found` for another tenant's, one `a` does
   * not manage, and anything that is neither).
   */
  async managed(a: Actor, idOrToken: string): Promise<ShareRow> {
    const row = a.kind === 'system' ? undefined : await this.byIdOrToken(a.principal, idOrToken);
    if (!row || !this.manages(a, row)) throw new AppError('not_found');
    return row;
  }

  /** A share of the tenant by its numeric id or its token (undefined for anything else). */
  private byIdOrToken(scope: TenantScope, idOrToken: string): Promise<ShareRow | undefined> {
    if (/^\d+$/.test(idOrToken)) return this.o.repo.byId(scope, Number(idOrToken));
    return TOKEN_RE.test(idOrToken) ? this.o.repo.byToken(scope, idOrToken) : Promise.resolve(undefined);
  }

  /** The tenant's live links held suspended now. */
  suspendedCount(scope: TenantScope): Promise<number> {
    return this.o.repo.suspendedCount(scope);
  }

  /**
   * The live share behind `token`, or the public refusal: `not_found` for a
   * malformed or unknown token and for a capped link (`params.reason`
   * `capped`), `expired` (clock or revoked by its owner), `revoked` (creator
   * disabled or deleted, storage disabled, or deleted: see share_tombstones), `storage_unavailable` while the
   * storage's drive is unplugged. `allowCapped` lets a
   * transfer that began before the cap was reached finish. The token is looked up in `scope`: another
   * tenant's token is `not_found` like an unknown one.
   */
  async open(scope: TenantScope, token: string, kind?: ShareRow['kind'], opts: { allowCapped?: boolean } = {}): Promise<OpenShare> {
    const share = typeof token === 'string' && TOKEN_RE.test(token) ? await this.o.repo.byToken(scope, token) : undefined;
    if (!share && TOKEN_RE.test(token) && (await this.o.repo.tombstoned(scope, token, kind))) throw new AppError('revoked', { reason: 'storage_removed' });
    if (!share || (kind && share.kind !== kind)) throw new AppError('not_found');
    // The creator is read once: for the state and as the link's actor.
    const owner = await this.ownerPrincipal(share);
    const state = this.stateWith(share, owner);
    if (state === 'expired') throw expiredError(share);
    if (state === 'revoked') throw new AppError('revoked');
    if (state === 'suspended') throw new AppError('link_suspended', {}, { reason: share.suspended_reason });
    // The drive behind the link is unplugged: 503, the link stays valid (no reason: it names local paths).
    if (this.o.catalogue.volumes.blocked(share.storage_id)) throw new AppError('storage_unavailable');
    if (state === 'capped' && !opts.allowCapped) throw new AppError('not_found', { reason: 'capped' });
    const live = owner!; // an active or capped state has its creator
    const storage = this.o.catalogue.repo.ofAnyTenant(share.storage_id)!;
    const ref = { id: share.id, storage_id: share.storage_id, rel: share.rel };
    const actor = (request?: RequestMeta) => linkActor(live, ref, request);
    return { share, owner: live, storage, files: this.o.files.forActor(actor()), actor };
  }

  /** Link metadata without a PIN (`GET /api/files/share/{token}`). */
  async metadata(scope: TenantScope, token: string): Promise<LinkMetadata> {
    const { share, files } = await this.open(scope, token);
    // An app page says what it shows through its own state route (GET /api/public/s/{token}), after its PIN.
    if (share.kind === 'app') throw new AppError('not_found');
    const e = await files.stat({ storage_id: share.storage_id, rel: share.rel }).catch(statOrRevoked);
    const size = e.type === 'dir' ? await this.folderBytes(share) : e.size;
    const common = {
      kind: share.kind,
      requires_pin: !!share.pin_hash,
      expires_at: share.expires_at,
      download_count: share.downloads,
      max_downloads: share.max_downloads,
      downloads_remaining: share.max_downloads === null ? null : Math.max(0, share.max_downloads - share.downloads),
      size,
      is_directory: e.type === 'dir',
    };
    // An encrypted file's name is ciphertext, and its type is the visitor's browser's to learn.
    if (this.encrypted(share.storage_id, share.rel)) return { ...common, filename: '', mime: 'application/octet-stream', encrypted: true };
    return {
      ...common,
      filename: share.rel === '' ? (this.o.catalogue.repo.ofAnyTenant(share.storage_id)?.name ?? '') : baseName(share.rel),
      mime: e.type === 'dir' ? 'inode/directory' : (e.mime ?? mimeOf(baseName(share.rel))),
      drop_settings: share.kind === 'drop' ? dropSettingsOf(share) : undefined,
    };
  }

  /** The PIN gate (link-pin.ts): a valid download token or the right PIN, else the gate's refusal. */
  checkPin(share: ShareRow, cred: { pin?: string; dt?: string }): Promise<void> {
    return this.pin.check(share, cred);
  }

  /** Checks a PIN against the gate and hands out a download token (link-pin.ts). */
  verify(share: ShareRow, pin: string): Promise<{ download_token: string; expires_at: string }> {
    return this.pin.verify(share, pin);
  }

  /** A token that opens this one share for 30 minutes (`dt`). */
  downloadToken(share: ShareRow): { download_token: string; expires_at: string } {
    return this.pin.downloadToken(share);
  }

  /**
   * Claims a download slot before anything is sent, so `max_downloads` is
   * exact under concurrency; `not_found` (capped) or the clock refusal when
   * none is left; `database_busy` when the database stayed held past the wait.
   * See DownloadSlot for when it is given back: a release that meets a
   * database held by another program is retried in the background for up to
   * 10 minutes, so a cap stays exact without holding the response that long.
   */
  async claimDownload(share: ShareRow): Promise<DownloadSlot> {
    if (!(await this.o.repo.claimDownload(share, share.id, new Date().toISOString()))) {
      const fresh = await this.o.repo.byId(share, share.id);
      if (fresh && (await this.stateOf(fresh)) === 'expired') throw expiredError(fresh);
      throw new AppError('not_found', { reason: 'capped' });
    }
    let settled = false;
    return {
      settle: async (bytesSent, size) => {
        if (settled) return;
        settled = true;
        if (bytesSent === 0 && size > 0)
          await this.o.repo.releaseDownload(share, share.id).catch(() => void this.o.repo.releaseDownload(share, share.id, 600_000).catch(() => undefined));
      },
    };
  }

  /** Deletes the tenant's links revoked or expired more than 7 days ago. Returns their ids. */
  sweep(scope: TenantScope, now = Date.now()): Promise<number[]> {
    return this.o.repo.sweep(scope, new Date(now - SWEEP_AFTER_MS).toISOString());
  }

  /** Public state of a row now (`shareState`): reads its creator. */
  async stateOf(s: ShareRow): Promise<ShareView['state']> {
    return this.stateWith(s, await this.ownerPrincipal(s));
  }

  /** The same with its creator already read (null: deleted or disabled). */
  private stateWith(s: ShareRow, owner: Principal | null): ShareView['state'] {
    return shareState(s, owner, this.o.catalogue.repo.ofAnyTenant(s.storage_id));
  }

  /** `<storage name>://<rel>`; the name is read now, so a renamed storage shows its new name. */
  sharePath(s: ShareRow): string {
    return `${this.o.catalogue.repo.ofAnyTenant(s.storage_id)?.name ?? s.storage_id}://${s.rel}`;
  }

  /** A share's public address for this request (share-urls.ts `shareUrl`). */
  urlOf(s: Pick<ShareRow, 'kind' | 'token'>, origin: string): string {
    return shareUrl(this.o, s, origin);
  }

  /** A share's address for someone it is sent to: its tenant's own (share-urls.ts `sentShareUrl`). */
  sentUrlOf(s: Pick<ShareRow, 'kind' | 'token' | 'tenant_id'>, origin: string): string {
    return sentShareUrl(this.o, s, origin);
  }

  /** Sum of the file sizes under a shared folder, from the catalogue (a share is on a storage of its tenant). */
  folderBytes(s: ShareRow): Promise<number> {
    return this.o.catalogue.nodes.treeBytes(shareStorage(s), s.rel);
  }

  /**
   * The owner's view of a share. `owner`: its creator when the caller has read it already (else read here);
   * `submissions`: a file request's uses (visits that sent files), known to the list; 0 elsewhere.
   */
  async present(s: ShareRow, origin: string, known: { owner?: Principal | null; submissions?: number } = {}): Promise<ShareView> {
    const owner = known.owner !== undefined ? known.owner : await this.ownerPrincipal(s);
    const view = shareView(s, { path: this.sharePath(s), url: this.urlOf(s, origin), state: this.stateWith(s, owner), submissions: known.submissions ?? 0 });
    return this.encrypted(s.storage_id, s.rel) ? { ...view, encrypted: true } : view;
  }

  /** Whether a link's item lies in an encrypted folder (the flag is the path's, never stored). */
  encrypted(storageId: number, rel: string): boolean {
    return !!this.o.catalogue.roots.rootOf(storageId, rel);
  }

  /** The creator as a principal (read in the share's tenant), or null when deleted or disabled (the link then reads as `revoked`). */
  ownerPrincipal(s: Pick<ShareRow, 'tenant_id' | 'owner_id'>): Promise<Principal | null> {
    return this.o.auth.repo.principal(s, s.owner_id);
  }

  /** The stored expiry (ms) and whether the ceiling shortened the request; null = never. */
  private expiry(now: number, input: CreateShareInput): { expiresAt: number | null; clamped: boolean } {
    const days = this.o.settings.get('share_max_ttl_days');
    const ceiling = days > 0 ? now + days * DAY : null;
    let wanted: number | null = null;
    if (input.expires_at !== undefined) {
      wanted = Date.parse(input.expires_at);
      if (Number.isNaN(wanted) || wanted <= now)
        throw new AppError('validation_failed', { field: 'expires_at', reason: 'a future RFC 3339 time' }, { field: 'expires_at' });
    } else if (input.ttlMs !== undefined) {
      if (input.ttlMs <= 0) throw new AppError('validation_failed', { field: 'ttl', reason: 'a positive duration' }, { field: 'ttl' });
      wanted = now + input.ttlMs;
    }
    if (wanted === null) return { expiresAt: ceiling, clamped: false };
    if (ceiling !== null && wanted > ceiling) return { expiresAt: ceiling, clamped: true };
    return { expiresAt: wanted, clamped: false };
  }
}

/** The spec's `expired` (clock, or revoked by its owner); `reason: revoked` lets the dead-link page say which. */
function expiredError(s: ShareRow): AppError {
  return s.revoked_at ? new AppError('expired', { reason: 'revoked' }) : new AppError('expired');
}

/** A backend that cannot be reached keeps the link valid: 503 `storage_unavailable`. */
export function unavailable(e: unknown): never {
  if (isAppError(e) && (e.code === 'storage_unreachable' || e.code === 'storage_unavailable' || e.code === 'timeout'))
    throw new AppError('storage_unavailable', {}, undefined, e.message);
  throw e;
}

/** The shared item itself is gone: the link reads as `revoked` (spec: file gone). */
export function statOrRevoked(e: unknown): never {
  if (isAppError(e) && e.code === 'not_found') throw new AppError('revoked', { reason: 'gone' });
  return unavailable(e);
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
