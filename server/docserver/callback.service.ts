/**
 * The document server's save callback (spec: Document editor integration,
 * rules 1 and 2; Document save callback status). The JWT (body `token` or
 * `Authorization: Bearer`) is verified HS256-only with the shared secret;
 * the key must name the node of the URL; only statuses 2 and 6 write:
 *   1. the revision is downloaded only from the configured document server's
 *      origin (no redirects: a forged `url` reaches nothing else), into the
 *      staging folder, refused above `max_upload_bytes`;
 *   2. it is written through the file service as a system actor: the version
 *      snapshot is taken first (a failed snapshot refuses the save), then the
 *      driver write, then the write gate (node row, `file.updated` with
 *      `meta.origin: docserver` and no actor, realtime frame, scan: at once
 *      for 2, one save-scan window later for 6);
 *   3. the newest save per node is recorded, and a callback that is not newer
 *      is not written: see `stale()`.
 * Saves of one node run one at a time.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { z } from 'zod';
import { systemActor } from '../auth';
import type { Catalogue } from '../catalogue';
import type { Db } from '../db';
import { AppError } from '../errors';
import type { FileService } from '../files';
import { randomToken } from '../lib/crypto';
import { discard } from '../lib/streams';
import type { ExternalServices } from './external.service';
import { DocserverSavesRepo, type SaveRow } from './saves.repo';
import { docKey, keyParts, verifyJwt, type KeyParts } from './signing';

/** Statuses the document server sends (spec: Document save callback status); 2 and 6 write. */
const KNOWN_STATUS = new Set([1, 2, 3, 4, 6, 7]);
const DOWNLOAD_TIMEOUT_MS = 120_000;
/** Refusals of the write that say what is wrong as they are; any other failure is answered 503 (retry later). */
const PASS_THROUGH = new Set(['read_only', 'quota_exceeded', 'insufficient_storage', 'locked', 'payload_too_large']);

/** What an unconfigured service verifies callback tokens with: random per process, never stored or sent. */
const UNKNOWABLE_SECRET = randomToken(32);

const callbackBody = z.object({
  key: z.string().min(1).max(128),
  status: z.number().int(),
  url: z.string().max(4096).optional(),
  lastsave: z.string().max(64).optional(),
  users: z.array(z.string()).optional(),
  forcesavetype: z.number().int().optional(),
});

export interface CallbackDeps {
  db: Db;
  files: FileService;
  catalogue: Catalogue;
  external: ExternalServices;
  secretKey: Buffer;
  stagingDir: string;
  /** 0 = no limit. */
  maxUploadBytes: number;
  log: { info(msg: string): void; warn(msg: string): void };
}

export type SaveOutcome = 'written' | 'ignored' | 'replay';

const refuse = (code: 'unauthorised' | 'forbidden' | 'validation_failed' | 'payload_too_large' | 'conflict' | 'not_found', reason: string) =>
  new AppError(code, { reason }, { reason });

export class CallbackService {
  private locks = new Map<number, Promise<unknown>>();
  private saves: DocserverSavesRepo;

  constructor(private d: CallbackDeps) {
    this.saves = new DocserverSavesRepo(d.db);
  }

  /**
   * Handles one callback for `node`. Returns what happened (the route answers
   * `{error: 0}` for all three); refusals throw with their reason, logged.
   */
  async handle(node: number, body: Record<string, unknown>, authorization: string): Promise<SaveOutcome> {
    try {
      return await this.run(node, body, authorization);
    } catch (e) {
      const reason = e instanceof AppError ? (e.details?.reason ?? e.code) : (e as Error).message;
      this.d.log.warn(`docserver callback for node ${node} refused: ${String(reason)}`);
      throw e;
    }
  }

  private async run(node: number, body: Record<string, unknown>, authorization: string): Promise<SaveOutcome> {
    const ds = this.d.external.docserver();
    const bearer = /^bearer\s+(.+)$/i.exec(authorization)?.[1]?.trim();
    const token = typeof body.token === 'string' && body.token ? body.token : bearer;
    if (!token) throw refuse('unauthorised', 'no token');
    // Unconfigured, the token meets a secret nobody knows: a stranger gets the refusal a wrong secret gets, so the
    // answer tells nothing about the configuration (the token is checked before anything else is said).
    const v = await verifyJwt(ds?.secret ?? UNKNOWABLE_SECRET, token);
    if ('reason' in v) throw refuse('unauthorised', v.reason);
    if (!ds) throw new AppError('not_configured', { feature: 'docserver' });
    // The header form of older document servers nests the callback under `payload`.
    const raw = v.claims.payload && typeof v.claims.payload === 'object' ? v.claims.payload : v.claims;
    const parsed = callbackBody.safeParse(raw);
    if (!parsed.success) throw refuse('validation_failed', `unreadable callback (${parsed.error.issues[0]?.path.join('.') || 'body'})`);
    const cb = parsed.data;
    const key = keyParts(cb.key);
    if (key?.node !== node) throw refuse('forbidden', 'the token does not name this node');
    if (!KNOWN_STATUS.has(cb.status)) throw refuse('validation_failed', `unknown status ${cb.status}`);
    if (cb.status !== 2 && cb.status !== 6) {
      this.d.log.info(`docserver callback for node ${node}: status ${cb.status}, nothing to write`);
      return 'ignored';
    }
    const lastsave = cb.lastsave ? Date.parse(cb.lastsave) : NaN;
    if (!Number.isFinite(lastsave)) throw refuse('validation_failed', 'lastsave missing or unreadable');
    if (!cb.url) throw refuse('validation_failed', 'url missing');
    let revision: URL;
    try {
      revision = new URL(cb.url);
    } catch {
      throw refuse('validation_failed', 'url unreadable');
    }
    if (revision.origin !== new URL(ds.url).origin) throw refuse('forbidden', `revision url is not on the document server (${revision.origin})`);
    return this.serial(node, () => this.save(key, { key: cb.key, status: cb.status as 2 | 6, lastsave, url: revision }));
  }

  /** Runs `fn` after every earlier save of the same node. */
  private async serial<T>(node: number, fn: () => Promise<T>): Promise<T> {
    const prev = this.locks.get(node) ?? Promise.resolve();
    const next = prev.catch(() => undefined).then(fn);
    this.locks.set(node, next);
    try {
      return await next;
    } finally {
      if (this.locks.get(node) === next) this.locks.delete(node);
    }
  }

  /** Writes the revision to the node the key names, found in the key's tenant (another tenant's is no catalogue row). */
  private async save(k: KeyParts, cb: { key: string; status: 2 | 6; lastsave: number; url: URL }): Promise<SaveOutcome> {
    const node = k.node;
    const scope = { tenant_id: k.tenant_id };
    const row = await this.d.catalogue.nodes.byId(scope, node);
    if (!row || row.deleted_at || row.type !== 'file') throw refuse('not_found', 'no catalogue row');
    const place = { storage_id: row.storage_id, rel: row.path };
    const sys = this.d.files.forActor(systemActor('docserver.save'));
    const etag = (await sys.open(place)).etag;
    const last = await this.saves.last(scope, node);
    const stale = this.stale(k, cb, etag, last);
    if (stale === 'replay') {
      this.d.log.info(
        `docserver callback for node ${node}: status ${cb.status} of ${new Date(cb.lastsave).toISOString()} is not newer than the save written; nothing written`,
      );
      return 'replay';
    }
    if (stale) throw refuse('conflict', stale);
    const tmp = join(this.d.stagingDir, `docserver-${node}-${randomToken(9)}`);
    try {
      const size = await this.download(cb.url, tmp);
      const revision = createReadStream(tmp);
      try {
        await sys.write(place, revision, { size, origin: 'docserver', audit: 'file.upload', meta: { status: cb.status, key: cb.key } });
      } catch (e) {
        // Refused before the driver read it (a failed snapshot): the file is removed below, so its late open must not go unheard.
        discard(revision);
        if (e instanceof AppError && PASS_THROUGH.has(e.code)) throw e;
        // The snapshot or the write failed (nothing was replaced): the document server keeps the revision and retries.
        const why = e instanceof AppError ? `${e.code}${e.params.path ? ` at ${e.params.path}` : ''}` : (e as Error).message;
        throw new AppError(
          'storage_unavailable',
          { reason: `version snapshot or write failed (${why})` },
          { reason: `version snapshot or write failed (${why})` },
        );
      }
      const after = (await sys.open(place)).etag;
      const now = new Date().toISOString();
      await this.saves.record(scope, { node_id: node, doc_key: cb.key, lastsave: cb.lastsave, etag: after, saved_at: now });
      this.d.log.info(`docserver save of node ${node} written (status ${cb.status}, ${size} bytes)`);
      return 'written';
    } finally {
      await rm(tmp, { force: true });
    }
  }

  /**
   * Whether a callback may write. The document key is bound to the etag the
   * editing session opened, and the newest save written is recorded per node
   * (session key, `lastsave`, the etag it produced). A callback writes when:
   *   - its key is the current bytes' key (the session's first save, nothing
   *     written since it opened), or
   *   - it continues the session that wrote the current bytes (same key, the
   *     file unchanged since) with a later `lastsave`.
   * The same session's callback with a `lastsave` not newer is a replay
   * (`'replay'`: answered, nothing written); anything else is a conflict
   * (an older session's callback after a newer save, or the file changed
   * by someone else during the session): refused, nothing written.
   */
  private stale(k: KeyParts, cb: { key: string; lastsave: number }, etag: string, last: SaveRow | undefined): string | 'replay' | null {
    if (last && last.doc_key === cb.key && cb.lastsave <= last.lastsave) return 'replay';
    if (docKey(this.d.secretKey, k, etag) === cb.key) return null;
    if (last && last.doc_key === cb.key && last.etag === etag) return null;
    return 'the file changed since this editing session opened it (a newer save or another write)';
  }

  /** Streams the revision into `tmp`, within the upload limit; returns its size. */
  private async download(url: URL, tmp: string): Promise<number> {
    const max = this.d.maxUploadBytes;
    let res: Response;
    try {
      res = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS) });
    } catch (e) {
      throw new AppError('storage_unreachable', { reason: `revision download failed (${(e as Error).message})` }, { reason: 'revision download failed' });
    }
    if (res.status !== 200 || !res.body) {
      await res.body?.cancel();
      throw new AppError('storage_unreachable', { reason: `revision download answered ${res.status}` }, { reason: `revision download answered ${res.status}` });
    }
    const declared = Number(res.headers.get('content-length') ?? NaN);
    if (max > 0 && declared > max) {
      await res.body.cancel();
      throw refuse('payload_too_large', `revision of ${declared} bytes is over the upload limit of ${max}`);
    }
    let n = 0;
    const limit = new Transform({
      transform(chunk: Buffer, _enc, done) {
        n += chunk.length;
        if (max > 0 && n > max) done(refuse('payload_too_large', `revision is over the upload limit of ${max} bytes`));
        else done(null, chunk);
      },
    });
    await pipeline(Readable.fromWeb(res.body as import('node:stream/web').ReadableStream), limit, createWriteStream(tmp, { flags: 'wx' }));
    return n;
  }
}
