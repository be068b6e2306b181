/**
 * Uploads: the single-request upload and the resumable chunked flow
 * (init / chunk / status / finalize / abort). A session belongs to its id and
 * its owner, not to a login token. Parts go to the storage's multipart
 * capability when it has one (local: written in place into one staged file,
 * published by a rename; s3: presigned parts), else into a sparse staging file
 * written to the storage once at finalize. Nothing is visible at the target
 * until finalize; the file service's write gate announces it.
 *
 * Finalize records its progress on the session row (`finalizing`, then
 * `published_at` once the bytes are in place) under a lease its instance
 * renews (`finalizing_by`, `finalize_until`), so a finalize cut short is
 * resolved by whichever instance looks after the lease passed (`recover`: at
 * start, hourly, or a client's finalize retry): a published session is
 * announced and closed, any other is released back to `open` and the
 * client's retry succeeds. A live instance's finalize is never touched.
 *
 * A session lives in its owner's tenant (docs/tenants.md): the owner finds it there and nowhere else, and
 * recovery and the sweep go tenant by tenant over every tenant.
 */
import type { Readable } from 'node:stream';
import { systemActor, type Actor, type Auth, type Principal } from '../auth';
import type { Catalogue, WriteContext, WriteOrigin } from '../catalogue';
import { NodesRepo, mimeOf } from '../catalogue';
import type { Published, UploadSession, UploadStatus as SessionView } from '../contract';
import type { TenantScope, TenantsRepo } from '../db';
import { AppError } from '../errors';
import type { FileService, FileStat, Place, QuotaTurn, StagedWrite } from '../files';
import { randomToken, safeEqual } from '../lib/crypto';
import { checkName, joinRel, parentRel, uiPath } from '../lib/paths';
import { Meter } from './meter';
import { SessionsRepo, type NewSession, type PartRow, type SessionRow } from './sessions.repo';
import { StagedFiles } from './staged-file';

export type { Published, SessionView };

export interface UploadLimits {
  /** 0 = no limit. */
  maxUploadBytes: number;
  maxChunkBytes: number;
  sessionTtlMs: number;
}

/** Who finalizes: this instance's id and how long its finalize lease lasts without renewal (renewed every third). */
export interface FinalizeLease {
  instanceId: string;
  leaseMs: number;
}

/** Which surface publishes (default `upload`; public drops pass `drop`). */
export type UploadOrigin = Extract<WriteOrigin, 'upload' | 'drop'>;

/** Chunk size when the client asks for none. */
export const DEFAULT_CHUNK = 8 * 1024 * 1024;
/** S3 refuses parts under 5 MiB (but the last) and more than 10,000 parts. */
const PRESIGNED_MIN_CHUNK = 5 * 1024 * 1024;
const MAX_PARTS = 10_000;
/** Text files up to this size get their content indexed for search at upload. */
const INDEX_TEXT_MAX = 256 * 1024;
/** A target written by the session's own finalize is at least this fresh (clock granularity of backends). */
const MTIME_SLACK_MS = 2000;

export class UploadsService {
  constructor(
    private files: FileService,
    private cat: Catalogue,
    private auth: Auth,
    private repo: SessionsRepo,
    private tenants: TenantsRepo,
    private staged: StagedFiles,
    private limits: UploadLimits,
    private lease: FinalizeLease,
  ) {}

  /**
   * Opens a session for the file at `path` (its folder is created when
   * missing). Refuses over `max_upload_bytes` (`payload_too_large`) and over
   * the owner's quota (`quota_exceeded`). The chunk size may be lowered to the
   * configured maximum or raised to fit the backend's part rules.
   */
  async init(a: Actor, input: { path: string; size: number; mime?: string; chunk_size?: number }): Promise<UploadSession> {
    const fa = this.files.forActor(a);
    const t = fa.target(input.path, 'editor');
    if (t.rel === '') throw new AppError('validation_failed', { field: 'path', reason: 'a file path is required' }, { field: 'path' });
    const owner = ownerOf(a);
    this.checkSize(input.size);
    const quota = await this.quotaOf(owner);
    await this.checkQuota(owner, input.size, quota);
    const staged = fa.staged(t.place); // a locked file is refused before its folder is made
    await this.tenantRoom(staged, input.size);
    await fa.ensureFolder({ storage_id: t.storage.id, rel: parentRel(t.rel) });
    const multipart = await staged.multipart();
    const presigned = !!multipart?.presigned;
    const chunk = this.chunkSize(input.size, input.chunk_size, presigned);
    const id = 'up_' + randomToken(18);
    const now = Date.now();
    const expires = new Date(now + this.limits.sessionTtlMs).toISOString();
    const handle = multipart ? (await multipart.init(t.rel, { size: input.size, partSize: chunk, mime: input.mime })).handle : null;
    const row: NewSession = {
      id,
      owner_id: owner.id,
      storage_id: t.storage.id,
      path: t.rel,
      size: input.size,
      chunk_size: chunk,
      mime: input.mime || null,
      mode: multipart ? 'driver' : 'staged',
      handle,
      state: 'open',
      created_at: new Date(now).toISOString(),
      expires_at: expires,
    };
    // The check above refuses early; this one is exact: another init of the owner may have taken the room since.
    if (!(await this.repo.open(owner, row, quota && quota.quota - quota.files))) {
      if (handle) await multipart!.abort(handle).catch(() => undefined);
      throw overQuota(quota!.quota, quota!.files + (await this.repo.inFlight(owner, owner.id, row.created_at)));
    }
    // The row before the file: another instance's orphan sweep (shared staging folder) never sees a file without its row.
    if (!multipart) {
      try {
        await this.staged.create(id, input.size);
      } catch (e) {
        await this.repo.delete(owner, id);
        throw e;
      }
    }
    let presigned_urls: Array<{ part: number; url: string; expires_at: string }> | null = null;
    if (presigned && multipart?.presignPart) {
      const ttl = Math.min(7 * 86_400, Math.floor(this.limits.sessionTtlMs / 1000));
      const at = new Date(now + ttl * 1000).toISOString();
      presigned_urls = [];
      for (let part = 1; part <= partCount(input.size, chunk); part++)
        presigned_urls.push({ part, url: await multipart.presignPart(handle!, part, ttl), expires_at: at });
    }
    return { upload_id: id, presigned_urls, expires_at: expires, chunk_size: chunk };
  }

  /**
   * Stores part `part` (1-based) from `body`. The body must be exactly the
   * part's length; with `sha256` it must also hash to it
   * (`checksum_mismatch`, and the part is not held). Re-sending a part
   * replaces it. Returns the etag finalize must name: a hashed part's names its content (`clientEtag`). `declared`: the body's length when the request
   * states it; another length than the part's is refused before a byte is read.
   */
  async chunk(a: Actor, id: string, part: number, body: Readable, sha256?: string, declared?: number): Promise<{ part: number; etag: string; size: number }> {
    const s = await this.session(a, id);
    const count = partCount(s.size, s.chunk_size);
    if (!Number.isInteger(part) || part < 1 || part > count)
      throw new AppError('validation_failed', { field: 'part', reason: `1..${count}` }, { field: 'part' });
    const offset = (part - 1) * s.chunk_size;
    const expected = Math.min(s.chunk_size, s.size - offset);
    if (declared !== undefined && declared !== expected)
      throw new AppError('bad_body', { reason: `part ${part} must be ${expected} bytes, the request declares ${declared}` });
    const meter = Meter.through(body, {
      max: expected,
      hash: !!sha256,
      tooLong: () => new AppError('bad_body', { reason: `part ${part} is longer than ${expected} bytes` }),
    });
    let etag: string;
    try {
      if (s.mode === 'driver') {
        const staged = this.files.forActor(a).staged(placeOf(s));
        const multipart = await staged.multipart();
        if (!multipart) throw new AppError('storage_unavailable', {}, undefined, 'the storage no longer takes multipart uploads');
        etag = (await multipart.putPart(s.handle!, part, staged.part(part, meter), expected)).etag;
      } else {
        await this.staged.write(s.id, offset, meter);
        if (meter.bytes !== expected) throw new AppError('bad_body', { reason: `part ${part} was ${meter.bytes} of ${expected} bytes` });
        etag = `${part}-${randomToken(9)}`;
      }
    } catch (e) {
      // Staged data removed under a running part (abort, sweep) surfaces as odd I/O errors: say what happened.
      if (!(await this.repo.get(s, s.id))) throw new AppError('not_found', { reason: 'the upload was aborted' });
      throw e;
    }
    const digest = meter.digest();
    if (sha256 && digest !== sha256.toLowerCase()) {
      await this.repo.dropPart(s, s.id, part);
      throw new AppError('checksum_mismatch', { part }, { part, expected: sha256.toLowerCase(), got: digest });
    }
    if (!(await this.repo.putPart(s, s.id, { part, size: expected, etag, sha256: digest })))
      throw new AppError('not_found', { reason: 'the upload was aborted or is being finalized' });
    return { part, etag: clientEtag({ part, etag, sha256: digest }), size: expected };
  }

  /** Which parts the session holds, so a client resumes after a dropped connection or a restart. */
  async status(a: Actor, id: string): Promise<SessionView> {
    const s = await this.session(a, id);
    const storage = this.cat.repo.ofAnyTenant(s.storage_id);
    return {
      upload_id: s.id,
      path: uiPath(storage?.name ?? String(s.storage_id), s.path),
      size: s.size,
      chunk_size: s.chunk_size,
      parts: (await this.repo.parts(s, s.id)).map((p) => ({ part: p.part, size: p.size, etag: clientEtag(p) })),
      expires_at: s.expires_at,
    };
  }

  /**
   * Publishes atomically. Every part must be named once with the etag its
   * last upload returned (`conflict` otherwise, and the session stays open to
   * fix it). Two finalizes of one session: the second gets `conflict`.
   */
  async finalize(a: Actor, id: string, etags: Array<{ part: number; etag: string }>, origin: UploadOrigin = 'upload'): Promise<Published> {
    const s = await this.session(a, id);
    const fa = this.files.forActor(a);
    const w = fa.staged(placeOf(s));
    const me = this.lease.instanceId;
    if (!(await this.repo.claim(s, s.id, me, this.leaseEnd()))) {
      // Held by a finalize whose instance died (lease passed): resolve it here, then finalize if it reopened.
      const [outcome] = await this.recoverSessions(s, [s.id]);
      if (outcome && outcome !== 'reopened') return outcome;
      if (outcome !== 'reopened' || !(await this.repo.claim(s, s.id, me, this.leaseEnd())))
        throw new AppError('conflict', { reason: 'the upload is already being finalized' });
    }
    const renewal = this.renewing(s, s.id);
    try {
      return await this.publish(s, w, fa, etags, origin);
    } finally {
      clearInterval(renewal);
    }
  }

  /** The claimed finalize: the bytes to the storage, marked published, then announced. */
  private async publish(
    s: SessionRow,
    w: StagedWrite,
    fa: ReturnType<FileService['forActor']>,
    etags: Array<{ part: number; etag: string }>,
    origin: UploadOrigin,
  ): Promise<Published> {
    let entry: FileStat;
    let created: boolean;
    let quota: QuotaTurn | undefined;
    try {
      const held = await this.repo.parts(s, s.id);
      const multipart = s.mode === 'driver' ? await w.multipart() : null;
      const parts = multipart?.presigned ? checkPresigned(s, etags) : checkParts(s, held, etags);
      // The tenant's quotas again at completion (other writes took room since init); refused, the session stays open.
      quota = (await this.files.quotaTurn(w.target.storage, s.path, s.size)).turn;
      await w.keepVersion();
      created = !(await w.catalogued());
      if (s.mode === 'driver') {
        if (!multipart) throw new AppError('storage_unavailable', {}, undefined, 'the storage no longer takes multipart uploads');
        entry = await multipart.complete(s.handle!, parts);
      } else entry = await w.put(this.staged.open(s.id), { size: s.size, mime: s.mime ?? mimeOf(s.path) });
    } catch (e) {
      quota?.release();
      // Reopened before the refusal answers, so the client's corrected retry can claim it (on PostgreSQL a release
      // left to the background lost that race: 409 "already being finalized"). A database held for long gets the
      // release in the background, for up to 10 minutes.
      const me = this.lease.instanceId;
      await this.repo.release(s, s.id, me).catch(() => void this.repo.release(s, s.id, me, 600_000).catch(() => undefined));
      throw e;
    }
    try {
      await this.repo.markPublished(s, s.id, new Date().toISOString(), 600_000);
      const fresh = (await w.statOrNull().catch(() => null)) ?? entry;
      return await this.close(w, s, fa.ctx(origin, { audit: 'file.upload', created }), fresh);
    } finally {
      quota.release();
    }
  }

  /**
   * Refuses a session of `size` bytes at `w`'s target over the tenant's quotas (a new path counts a file),
   * counting what the tenant's open sessions declared. Nothing is asked in single-tenant mode (no tenant quotas).
   */
  private async tenantRoom(w: StagedWrite, size: number): Promise<void> {
    if (!this.files.hasQuotas) return;
    const inFlight = await this.repo.inFlight(w.target.storage, null, new Date().toISOString());
    await this.files.checkQuota(w.target.storage, size + inFlight, (await w.catalogued()) ? 0 : 1);
  }

  /** Discards the session and its staged parts. A session being finalized → `conflict`. */
  async abort(a: Actor, id: string): Promise<void> {
    const s = await this.session(a, id);
    if (s.state !== 'open' || !(await this.repo.deleteOpen(s, s.id))) throw new AppError('conflict', { reason: 'the upload is being finalized' });
    await this.discard(s);
  }

  /**
   * Single-request upload of `name` into folder `folder`, streamed to the
   * storage's atomic write. The size limit and what is left of the quota are
   * enforced while streaming.
   */
  async single(a: Actor, folder: string, name: string, body: Readable, declaredSize?: number): Promise<Published> {
    checkName(name);
    const fa = this.files.forActor(a);
    const dir = fa.target(folder, 'editor');
    const place: Place = { storage_id: dir.storage.id, rel: joinRel(dir.rel, name) };
    const m = await this.metered(a, name, body, declaredSize);
    await fa.ensureFolder(dir.place);
    const node = await fa.write(place, m.body, { size: declaredSize, mime: m.mime, origin: 'upload', audit: 'file.upload', body: m.text });
    return this.published(node.storage_id, node.path, node);
  }

  /**
   * The upload rules for a whole-file write by `a` from any door (the form
   * upload, the protocol gateways): `payload_too_large` over
   * `max_upload_bytes` and `quota_exceeded` over the owner's quota, at once
   * for a declared size, else while `body` streams; keeps the first bytes of
   * a text file for the search index (`text`).
   */
  async metered(a: Actor, name: string, body: Readable, declaredSize?: number): Promise<{ body: Readable; mime: string; text: () => string | undefined }> {
    if (declaredSize !== undefined) this.checkSize(declaredSize);
    const owner = ownerOf(a);
    const room = await this.checkQuota(owner, declaredSize ?? 0, await this.quotaOf(owner));
    const mime = mimeOf(name);
    const max = this.limits.maxUploadBytes || Number.MAX_SAFE_INTEGER;
    // Whichever limit is nearer stops the stream: the size limit or what is left of the quota.
    const tooLong = room < max ? () => new AppError('quota_exceeded', { quota: room }, { code: 'QUOTA_EXCEEDED' }) : undefined;
    const meter = Meter.through(body, { max: Math.min(max, room), tooLong, keep: NodesRepo.textual(mime, 1) ? INDEX_TEXT_MAX : 0 });
    return { body: meter, mime, text: () => meter.keptText() };
  }

  /**
   * Resolves finalizes cut short whose lease passed (their instance died): sessions whose bytes were
   * published are announced and closed; the others are closed when their target is whole, else opened
   * again. `everyone`: at a start with no other server on the database (always on SQLite, where the
   * data-dir lock says so; db/instances.repo.ts on PostgreSQL), every `finalizing` session is a crash's.
   * Tenant by tenant, over every tenant.
   */
  async recover(o: { everyone?: boolean } = {}): Promise<{ finished: number; reopened: number }> {
    const outcomes: Array<Published | 'reopened' | null> = [];
    for (const t of await this.tenants.list()) {
      const stale = (await this.repo.finalizing(t, o.everyone ? Infinity : Date.now())).map((s) => s.id);
      outcomes.push(...(await this.recoverSessions(t, stale, o.everyone)));
    }
    return { finished: outcomes.filter((r) => r && r !== 'reopened').length, reopened: outcomes.filter((r) => r === 'reopened').length };
  }

  /**
   * Takes over each of the tenant's sessions' passed finalize lease and resolves it; `null` for one that is
   * live or someone else took.
   */
  private async recoverSessions(t: TenantScope, ids: string[], everyone = false): Promise<Array<Published | 'reopened' | null>> {
    const me = this.lease.instanceId;
    const fa = this.files.forActor(systemActor('uploads.recover'));
    const out: Array<Published | 'reopened' | null> = [];
    for (const id of ids) {
      const s = (await this.repo.takeOver(t, id, me, this.leaseEnd(), everyone ? Infinity : Date.now())) ? await this.repo.get(t, id) : undefined;
      if (!s) {
        out.push(null);
        continue;
      }
      const renewal = this.renewing(t, id);
      try {
        let w: StagedWrite | null = null;
        try {
          w = fa.staged(placeOf(s), { ignoreReadOnly: true });
        } catch {
          // Its storage is gone: reopened, the sweep forgets it when it expires.
        }
        const at = w && (await w.statOrNull().catch(() => null));
        const whole =
          at?.type === 'file' && at.size === s.size && (s.published_at || (s.mode === 'driver' && at.mtime >= Date.parse(s.created_at) - MTIME_SLACK_MS));
        if (w && at && whole) {
          // The owner is a person of the session's tenant.
          const owner = await this.auth.repo.byId(s, s.owner_id);
          out.push(await this.close(w, s, { ...fa.ctx('upload', { audit: 'file.upload' }), actor: owner ? { id: owner.id, email: owner.email } : null }, at));
        } else {
          await this.repo.release(s, s.id, me);
          out.push('reopened');
        }
      } finally {
        clearInterval(renewal);
      }
    }
    return out;
  }

  /**
   * Removes every tenant's expired sessions with their staged data, tenant by tenant, and staged files no
   * session owns. Returns how many sessions went.
   */
  async sweep(): Promise<number> {
    let n = 0;
    // Finalizes cut short on an instance that died: this instance looks once their lease passed.
    await this.recover();
    for (const t of await this.tenants.list()) {
      for (const s of await this.repo.deleteExpired(t, new Date().toISOString(), Date.now())) {
        await this.discard(s).catch(() => undefined);
        n++;
      }
    }
    // Files first, tenants and rows second: a file listed here was created after its row (init), so a live session's row is read.
    const present = await this.staged.present();
    const live = await this.repo.allIds(await this.tenants.list());
    for (const id of present) if (!live.has(id)) await this.staged.remove(id);
    return n;
  }

  /** Announces a published session's file, then forgets the session and its staging. */
  private async close(w: StagedWrite, s: SessionRow, ctx: WriteContext, entry: FileStat): Promise<Published> {
    const node = await w.announce(entry, ctx);
    await this.repo.delete(s, s.id, 600_000);
    if (s.mode === 'staged') await this.staged.remove(s.id);
    return this.published(s.storage_id, s.path, node);
  }

  private leaseEnd(): number {
    return Date.now() + this.lease.leaseMs;
  }

  /** Renews this instance's lease on a session's finalize every third of the lease until cleared. */
  private renewing(s: TenantScope, id: string): NodeJS.Timeout {
    const t = setInterval(
      () => void this.repo.renew(s, id, this.lease.instanceId, this.leaseEnd()).catch(() => undefined),
      Math.max(50, Math.floor(this.lease.leaseMs / 3)),
    );
    t.unref();
    return t;
  }

  private published(storageId: number, rel: string, node: { id: number; size: number; mtime: number; etag: string | null }): Published {
    const name = this.cat.repo.ofAnyTenant(storageId)?.name ?? String(storageId);
    return { id: node.id, path: uiPath(name, rel), size: node.size, etag: node.etag ?? `"${node.size.toString(16)}-${node.mtime.toString(16)}"` };
  }

  private async discard(s: SessionRow): Promise<void> {
    if (s.mode === 'staged') return this.staged.remove(s.id);
    await (await this.files.forActor(systemActor('uploads.discard')).staged(placeOf(s), { ignoreReadOnly: true }).multipart())?.abort(s.handle!);
  }

  /**
   * The actor's live session, looked up in the owner's tenant; anyone else's, another tenant's, an unknown
   * one, or a swept one is `not_found`; expired is `upload_expired`.
   */
  private async session(a: Actor, id: string): Promise<SessionRow> {
    const owner = ownerOf(a);
    const s = typeof id === 'string' && /^up_[A-Za-z0-9_-]{10,64}$/.test(id) ? await this.repo.get(owner, id) : undefined;
    if (!s || s.owner_id !== owner.id) throw new AppError('not_found', { reason: 'no such upload session' });
    if (Date.parse(s.expires_at) < Date.now()) throw new AppError('upload_expired');
    return s;
  }

  private checkSize(size: number): void {
    const max = this.limits.maxUploadBytes;
    if (max > 0 && size > max) throw new AppError('payload_too_large', { max }, { max });
  }

  /** The owner's quota and the bytes their files take; null without a quota. */
  private async quotaOf(owner: Principal): Promise<{ quota: number; files: number } | null> {
    const quota = (await this.auth.repo.byId(owner, owner.id))?.quota_bytes;
    if (quota === null || quota === undefined || quota <= 0) return null;
    return { quota, files: (await this.cat.nodes.usage(owner, { ownerId: owner.id })).used_bytes };
  }

  /** Refuses `adding` bytes over the owner's quota (files and live sessions); returns the bytes still free (unbounded without a quota). */
  private async checkQuota(owner: Principal, adding: number, q: { quota: number; files: number } | null): Promise<number> {
    if (!q) return Number.MAX_SAFE_INTEGER;
    const used = q.files + (await this.repo.inFlight(owner, owner.id, new Date().toISOString()));
    if (used + adding > q.quota) throw overQuota(q.quota, used);
    return q.quota - used;
  }

  private chunkSize(size: number, asked: number | undefined, presigned: boolean): number {
    let chunk = Math.min(asked || DEFAULT_CHUNK, this.limits.maxChunkBytes);
    if (presigned) chunk = Math.max(chunk, PRESIGNED_MIN_CHUNK);
    if (Math.ceil(size / chunk) > MAX_PARTS) chunk = Math.ceil(size / MAX_PARTS);
    if (chunk > this.limits.maxChunkBytes && !presigned)
      throw new AppError('payload_too_large', { max: this.limits.maxChunkBytes * MAX_PARTS }, { reason: 'more than 10000 parts of the largest chunk' });
    return chunk;
  }
}

/** The account an upload belongs to (a link's uploads belong to its creator), and so its tenant. */
function ownerOf(a: Actor): Principal {
  if (a.kind === 'system') throw new AppError('forbidden', { reason: 'system work does not upload' });
  return a.principal;
}

const overQuota = (quota: number, used: number) => new AppError('quota_exceeded', { quota, used }, { code: 'QUOTA_EXCEEDED', quota, used });

const partCount = (size: number, chunk: number): number => Math.max(1, Math.ceil(size / chunk));

/**
 * The etag a client gets for a part and names at finalize. A part sent with its SHA-256 gets its content's (as
 * S3's ETag is the part's MD5): the same bytes sent twice (a resumed upload, then a late request of the page it
 * replaced) answer the same etag, so finalize holds whichever landed last. Else the put's own (unique per put);
 * the driver's etag stays the one its `complete` is given.
 */
const clientEtag = (p: { part: number; etag: string; sha256: string | null }): string => (p.sha256 ? `${p.part}-${p.sha256.slice(0, 32)}` : p.etag);

/** Every part once, in order, with the etag the server handed out for its last upload. */
function checkParts(s: SessionRow, held: PartRow[], etags: Array<{ part: number; etag: string }>): Array<{ part: number; etag: string }> {
  const count = partCount(s.size, s.chunk_size);
  if (etags.length !== count) throw new AppError('conflict', { reason: `expected ${count} parts, got ${etags.length}` });
  const byPart = new Map(held.map((p) => [p.part, p]));
  const sorted = [...etags].sort((a, b) => a.part - b.part);
  sorted.forEach((e, i) => {
    const h = byPart.get(i + 1);
    if (e.part !== i + 1 || !h || !safeEqual(bareEtag(clientEtag(h)), bareEtag(String(e.etag))))
      throw new AppError('conflict', { reason: `part ${i + 1} is missing or its etag does not match` });
  });
  return sorted.map((e) => ({ part: e.part, etag: byPart.get(e.part)!.etag }));
}

/**
 * An etag without its HTTP quotes: the chunk answer's `ETag` header is quoted (RFC 9110), its body
 * field is not, and finalize takes either (as S3's CompleteMultipartUpload does).
 */
const bareEtag = (etag: string): string => (etag.length >= 2 && etag.startsWith('"') && etag.endsWith('"') ? etag.slice(1, -1) : etag);

/** Presigned parts went straight to the backend: the backend checks the etags; here only their shape. */
function checkPresigned(s: SessionRow, etags: Array<{ part: number; etag: string }>): Array<{ part: number; etag: string }> {
  const sorted = [...etags].sort((a, b) => a.part - b.part);
  if (sorted.length !== partCount(s.size, s.chunk_size) || sorted.some((e, i) => e.part !== i + 1))
    throw new AppError('conflict', { reason: 'every part must be named once' });
  return sorted;
}

const placeOf = (s: SessionRow): Place => ({ storage_id: s.storage_id, rel: s.path });
