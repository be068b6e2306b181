/**
 * File requests (blind drops). A visitor opens a submission, which becomes a
 * fresh folder `YYYY-MM-DD_HHMMSS_<name or anon>` inside the shared folder;
 * each file then goes through the uploads module's chunked, resumable
 * sessions on behalf of the link's owner (their access and quota apply, the
 * actor stays anonymous). The visitor only ever learns the names and sizes it
 * sent: never the destination, never what else is there. Finishing emits
 * `drop.received` and mails the owner (best effort). A token is looked up in the tenant the caller gives
 * (the door's), and a submission and its files in its link's.
 */
import { Readable } from 'node:stream';
import type { Readable as ReadableT } from 'node:stream';
import type { Principal } from '../auth';
import type { Catalogue } from '../catalogue';
import type { TenantScope } from '../db';
import type { EventBus, Mailer, RequestMeta } from '../events';
import type { FileService, Place } from '../files';
import { AppError } from '../errors';
import { randomToken } from '../lib/crypto';
import { isLang } from '../lib/i18n';
import { checkName, extOf, joinRel, uiPath } from '../lib/paths';
import type { UploadsService } from '../uploads';
import { pt } from './public-i18n';
import { RateLimiter } from './rate-limit';
import type { ShareRow, SubmissionRow } from './shares.repo';
import { dropSettingsOf } from './share-views';
import { unavailable, type OpenShare, type SharesService } from './shares.service';

export const NOTE_NAME = 'NOT.txt';
export const NOTE_MAX_CHARS = 10_000;
export const UPLOADER_MAX_CHARS = 64;
/** Chunks the drop page asks for: well under the 100 MB body cap of common tunnels. */
export const DROP_CHUNK = 16 * 1024 * 1024;
/** An unfinished submission older than this is announced by the sweep. */
const STALE_MS = 60 * 60_000;
const SID_RE = /^sub_[A-Za-z0-9_-]{20,40}$/;
/** How often a file that lost its name to another added meanwhile tries the next one. */
const NAME_TRIES = 5;

export interface DropCredential {
  pin?: string;
  dt?: string;
}

export interface DropsOptions {
  shares: SharesService;
  uploads: UploadsService;
  files: FileService;
  catalogue: Catalogue;
  bus: EventBus;
  mailer: Mailer;
  log: (msg: string, err?: unknown) => void;
  /** Submissions per address per 10 minutes. */
  submissionsPerWindow?: number;
  /** Drop API calls per address per minute (chunks included). */
  callsPerMinute?: number;
}

export class DropsService {
  private submissions: RateLimiter;
  private calls: RateLimiter;

  constructor(private o: DropsOptions) {
    this.submissions = new RateLimiter(o.submissionsPerWindow ?? 20, 10 * 60_000);
    this.calls = new RateLimiter(o.callsPerMinute ?? 600, 60_000);
  }

  /**
   * Opens a submission (PIN checked here once; the returned id then carries
   * the visitor). Creates its folder and the optional note `NOT.txt`. Refuses
   * a read-only storage (`read_only`), an unreachable one
   * (`storage_unavailable`, the link stays valid) and too many submissions
   * from one address (`rate_limited`).
   */
  async start(
    scope: TenantScope,
    token: string,
    cred: DropCredential,
    input: { name?: string; note?: string },
    req: RequestMeta,
  ): Promise<{ submission_id: string; chunk_size: number }> {
    const ip = req.ip ?? '';
    this.calls.hit(ip);
    const open = await this.o.shares.open(scope, token, 'drop');
    await this.o.shares.checkPin(open.share, cred);
    const note = cleanNote(input.note);
    this.submissions.hit(ip);
    const files = this.filesFor(open, req);
    files.target(this.place(open, open.share.rel), 'editor');
    const folder = await this.freshFolder(open, req, submissionFolderName(new Date(), input.name));
    const id = 'sub_' + randomToken(18);
    await this.o.shares.repo.insertSubmission(open.share, {
      id,
      share_id: open.share.id,
      folder,
      uploader: cleanUploader(input.name) || null,
      ip: ip || null,
      has_note: note ? 1 : 0,
      created_at: new Date().toISOString(),
    });
    if (note) {
      const body = Buffer.from(note, 'utf8');
      await files
        .write(this.place(open, joinRel(folder, NOTE_NAME)), Readable.from([body]), {
          size: body.length,
          mime: 'text/plain',
          origin: 'drop',
          audit: 'file.upload',
          meta: { share_id: open.share.id },
          version: false,
        })
        .catch(unavailable);
    }
    return { submission_id: id, chunk_size: DROP_CHUNK };
  }

  /**
   * Adds one file to a submission and opens its upload session. Checks the
   * name (`name_not_allowed`, `name_too_long`, `reserved_name`), the
   * extension allow-list, the per-file size (`payload_too_large`), the files
   * per submission (`too_many`) and the link's remaining uploads. A name
   * already used in the submission gets a ` (2)` suffix; the final name is
   * returned. The repository decides the slot and the name together: a file
   * that lost its name to one added meanwhile tries the next free name.
   */
  async addFile(scope: TenantScope, token: string, sid: string, input: { name: string; size: number; mime?: string }, req: RequestMeta) {
    this.calls.hit(req.ip ?? '');
    const { open, sub } = await this.submission(scope, token, sid);
    const s = dropSettingsOf(open.share);
    const name = checkName(String(input.name ?? '').normalize('NFC'));
    if (s.allowed_ext.length && !s.allowed_ext.includes(extOf(name)))
      throw new AppError(
        'validation_failed',
        { field: 'name', reason: 'ext_not_allowed', allowed: s.allowed_ext.join(', ') },
        { field: 'name', reason: 'ext_not_allowed', allowed: s.allowed_ext },
      );
    const max = s.max_file_size_mb * 1024 * 1024;
    if (!Number.isSafeInteger(input.size) || input.size < 0) throw new AppError('validation_failed', { field: 'size' }, { field: 'size' });
    if (input.size > max) throw new AppError('payload_too_large', { max }, { max, field: 'size' });
    if (open.share.max_uploads !== null && open.share.uploads >= open.share.max_uploads) throw new AppError('not_found', { reason: 'capped' });
    const visitor = open.actor(req);
    for (let tries = 0; tries < NAME_TRIES; tries++) {
      const taken = await this.o.shares.repo.namesIn(sub, sub.id);
      if (sub.has_note) taken.add(NOTE_NAME.toLowerCase());
      const finalName = uniqueName(name, taken);
      const session = await this.o.uploads
        .init(visitor, { path: uiPath(open.storage.uid, joinRel(sub.folder, finalName)), size: input.size, mime: input.mime, chunk_size: DROP_CHUNK })
        .catch(unavailable);
      const added = await this.o.shares.repo.addSubmissionFile(sub, sub.id, s.max_files, { upload_id: session.upload_id, name: finalName, size: input.size });
      if (added === 'added') return { upload_id: session.upload_id, name: finalName, chunk_size: session.chunk_size, expires_at: session.expires_at };
      await this.o.uploads.abort(visitor, session.upload_id).catch(() => undefined);
      if (added === 'full') throw new AppError('too_many', { max: s.max_files }, { max: s.max_files });
    }
    throw new AppError('conflict', { reason: 'too many files of this name at once' });
  }

  /** Stores one chunk of a file of this submission (see `UploadsService.chunk`). */
  async chunk(scope: TenantScope, token: string, sid: string, uploadId: string, part: number, body: ReadableT, req: RequestMeta, sha256?: string) {
    this.calls.hit(req.ip ?? '');
    const { open } = await this.fileOf(scope, token, sid, uploadId);
    return this.o.uploads.chunk(open.actor(req), uploadId, part, body, sha256).catch(unavailable);
  }

  /** The parts held for a file, so the page resumes after a dropped connection. */
  async status(scope: TenantScope, token: string, sid: string, uploadId: string) {
    const { open, file } = await this.fileOf(scope, token, sid, uploadId);
    const v = await this.o.uploads.status(open.actor(), uploadId);
    return { upload_id: uploadId, name: file.name, size: v.size, chunk_size: v.chunk_size, parts: v.parts, expires_at: v.expires_at };
  }

  /**
   * Publishes one file. A received-file slot is claimed first, so
   * `max_uploads` is exact; it is given back when publishing fails.
   */
  async finalize(
    scope: TenantScope,
    token: string,
    sid: string,
    uploadId: string,
    etags: Array<{ part: number; etag: string }>,
    req: RequestMeta,
  ): Promise<{ name: string; size: number }> {
    this.calls.hit(req.ip ?? '');
    const { open, file } = await this.fileOf(scope, token, sid, uploadId);
    if (file.done) return { name: file.name, size: file.size };
    if (!(await this.o.shares.repo.claimUpload(open.share, open.share.id))) throw new AppError('not_found', { reason: 'capped' });
    try {
      await this.o.uploads.finalize(open.actor(req), uploadId, etags, 'drop').catch(unavailable);
    } catch (e) {
      await this.o.shares.repo.releaseUpload(open.share, open.share.id);
      throw e;
    }
    await this.o.shares.repo.markFileDone(file, uploadId);
    return { name: file.name, size: file.size };
  }

  /** Closes the submission: announces what arrived. Idempotent; returns how many files were received. */
  async finish(scope: TenantScope, token: string, sid: string, req: RequestMeta): Promise<{ received: number }> {
    this.calls.hit(req.ip ?? '');
    const { open, sub } = await this.submission(scope, token, sid, true);
    const files = (await this.o.shares.repo.submissionFiles(sub, sub.id)).filter((f) => f.done);
    if (await this.o.shares.repo.finishSubmission(sub, sub.id, new Date().toISOString()))
      await this.announce(
        open.share,
        open.owner,
        sub,
        files.map((f) => f.name),
      );
    return { received: files.length };
  }

  /** Announces the tenant's submissions the visitor left without finishing (hourly sweep, tenant by tenant). */
  async sweepStale(scope: TenantScope, now = Date.now()): Promise<void> {
    for (const sub of await this.o.shares.repo.staleSubmissions(scope, new Date(now - STALE_MS).toISOString())) {
      if (!(await this.o.shares.repo.finishSubmission(sub, sub.id, new Date(now).toISOString()))) continue;
      const share = await this.o.shares.repo.byId(sub, sub.share_id);
      const files = (await this.o.shares.repo.submissionFiles(sub, sub.id)).filter((f) => f.done).map((f) => f.name);
      if (share && files.length) await this.announce(share, await this.o.shares.ownerPrincipal(share), sub, files);
    }
  }

  /** `owner`: the link's creator as already read (null: deleted or disabled, no mail). */
  private async announce(share: ShareRow, owner: Principal | null, sub: SubmissionRow, files: string[]): Promise<void> {
    if (!files.length && !sub.has_note) return;
    const storage = this.o.catalogue.repo.ofAnyTenant(share.storage_id);
    const folder = uiPath(storage?.name ?? String(share.storage_id), sub.folder);
    await this.o.bus.emit(share, 'drop.received', { share_id: share.id, owner_id: share.owner_id, folder, files, uploader: sub.uploader ?? undefined });
    if (!owner || !this.o.mailer.enabled) return;
    const lang = isLang(owner.language) ? owner.language : 'en';
    const name = share.rel === '' ? (storage?.name ?? '') : share.rel.slice(share.rel.lastIndexOf('/') + 1);
    const params = { folder, name, n: files.length, files: files.map((f) => `- ${f}`).join('\n'), uploader: sub.uploader ?? pt(lang, 'anon') };
    void this.o.mailer
      .send([owner.email], { subject: pt(lang, 'mail.received.subject', params), text: pt(lang, 'mail.received.body', params) })
      .catch((e) => this.o.log(`drop ${share.id}: owner mail failed`, e));
  }

  private async submission(scope: TenantScope, token: string, sid: string, allowCapped = false): Promise<{ open: OpenShare; sub: SubmissionRow }> {
    const open = await this.o.shares.open(scope, token, 'drop', { allowCapped });
    const sub = typeof sid === 'string' && SID_RE.test(sid) ? await this.o.shares.repo.submission(open.share, sid) : undefined;
    if (!sub || sub.share_id !== open.share.id) throw new AppError('not_found', { reason: 'no such submission' });
    if (sub.finished_at) throw new AppError('conflict', { reason: 'the submission is finished' });
    return { open, sub };
  }

  private async fileOf(scope: TenantScope, token: string, sid: string, uploadId: string) {
    const { open, sub } = await this.submission(scope, token, sid, true);
    const file = typeof uploadId === 'string' ? await this.o.shares.repo.dropFile(sub, uploadId) : undefined;
    if (!file || file.submission_id !== sub.id) throw new AppError('not_found', { reason: 'no such upload session' });
    return { open, sub, file };
  }

  /** Creates the submission folder, adding `_2`, `_3`… when the same second and name met already. */
  private async freshFolder(open: OpenShare, req: RequestMeta, base: string): Promise<string> {
    const files = this.filesFor(open, req);
    for (let i = 1; i <= 50; i++) {
      const rel = joinRel(open.share.rel, i === 1 ? base : `${base}_${i}`);
      if (await files.exists(this.place(open, rel)).catch(unavailable)) continue;
      await files.mkdir(this.place(open, rel)).catch(unavailable);
      return rel;
    }
    throw new AppError('conflict', { reason: 'too many submissions at once' });
  }

  /** The file service as the link, for this visitor's request. */
  private filesFor(open: OpenShare, req: RequestMeta) {
    return this.o.files.forActor(open.actor(req));
  }

  private place(open: OpenShare, rel: string): Place {
    return { storage_id: open.storage.id, rel };
  }
}

/** `YYYY-MM-DD_HHMMSS_<name or anon>` in the server's local time. */
export function submissionFolderName(at: Date, uploader?: string): string {
  const p = (n: number) => String(n).padStart(2, '0');
  const stamp = `${at.getFullYear()}-${p(at.getMonth() + 1)}-${p(at.getDate())}_${p(at.getHours())}${p(at.getMinutes())}${p(at.getSeconds())}`;
  return `${stamp}_${cleanUploader(uploader) || 'anon'}`;
}

/**
 * The uploader's name as a folder-name part: control characters, path
 * separators and characters Windows forbids removed, spaces folded to `_`,
 * leading dots dropped, at most 64 characters. '' when nothing is left.
 */
export function cleanUploader(name: unknown): string {
  if (typeof name !== 'string') return '';
  return name
    .normalize('NFC')
    .replace(/[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069/\\:*?"<>|]/g, '')
    .trim()
    .replace(/\s+/g, '_')
    .replace(/^[._]+/, '')
    .slice(0, UPLOADER_MAX_CHARS)
    .replace(/[._]+$/, '');
}

/** The note as saved: control characters other than tab and newline removed; over 10,000 characters is refused. */
export function cleanNote(note: unknown): string {
  if (note === undefined || note === null) return '';
  if (typeof note !== 'string') throw new AppError('validation_failed', { field: 'note' }, { field: 'note' });
  if (note.length > NOTE_MAX_CHARS)
    throw new AppError('validation_failed', { field: 'note', reason: `at most ${NOTE_MAX_CHARS} characters` }, { field: 'note', max: NOTE_MAX_CHARS });
  return note
    .replace(/\r\n?/g, '\n')
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, '')
    .trim();
}

/** `name`, or `name (2).ext`, `name (3).ext`… whichever is not in `taken` (lower-cased). */
export function uniqueName(name: string, taken: Set<string>): string {
  if (!taken.has(name.toLowerCase())) return name;
  const dot = name.lastIndexOf('.');
  const stem = dot > 0 ? name.slice(0, dot) : name;
  const ext = dot > 0 ? name.slice(dot) : '';
  for (let i = 2; ; i++) {
    const candidate = `${stem} (${i})${ext}`;
    if (!taken.has(candidate.toLowerCase())) return candidate;
  }
}
