/**
 * Files being written over NFS. NFS has no open or close: WRITEs arrive at
 * any offset, in any order, from any connection. Each file being written gets
 * one staged temp file in the data folder's staging area, written
 * positionally (never held in memory), and is published whole through
 * `GatewayTree.write` (atomic, write gate, quota) by COMMIT, a while after
 * the last write (QUIET_MS after UNSTABLE writes, SYNC_QUIET_MS after
 * FILE_SYNC ones), or before a RENAME or REMOVE of it. Until then other doors
 * see the file as it was (or not at all: a file made by CREATE is pending, in
 * memory, and its handle names the pending file until it is published).
 * An existing file written again is first copied into the stage, so a write
 * to its middle keeps the rest.
 */
import { createWriteStream } from 'node:fs';
import { mkdir, open, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { randomBytes } from 'node:crypto';
import type { Logger } from '../../lib/log';
import type { GatewayTree } from '../index';

/** Publish this long after the last UNSTABLE write (a client that never sends COMMIT). */
export const QUIET_MS = 5000;
/** Publish this long after the last FILE_SYNC write (the data is already on disk in the stage). */
export const SYNC_QUIET_MS = 500;
/**
 * A stage at least this big is given to the storage to move into place
 * (a local storage on the same filesystem renames it: no second copy).
 * Smaller ones are streamed: cheap, and a small text file's bytes feed the
 * search index on the way.
 */
const MOVE_MIN = 1 << 20;
/** UNSTABLE writes still being written after their answer (1 MiB each at most): per stage, in all. */
const BEHIND_MAX = 8;
const BEHIND_TOTAL = 64;
/** Pending files remembered after publishing, so their handles keep working. */
const PUBLISHED_MEMORY = 10_000;

export interface Place {
  storageId: number;
  rel: string;
  /** The storage's name, for the UI path. */
  storage: string;
}

const keyOf = (p: { storageId: number; rel: string }) => `${p.storageId}\0${p.rel}`;
const uiPath = (p: Place) => `/${p.storage}/${p.rel}`;

export class Staged {
  size = 0;
  /** Set when publishing starts: later writes go to a new stage. */
  sealed = false;
  private inflight = 0;
  /** UNSTABLE writes answered and still being written, with the bytes each covers. */
  private behind = new Map<Promise<void>, [number, number]>();
  /** The first error of such a write: publishing fails with it. */
  private failed: unknown = null;
  private idle: (() => void) | null = null;
  private timer: NodeJS.Timeout | null = null;
  private published: Promise<void> | null = null;

  constructor(
    readonly place: Place,
    readonly file: string,
    readonly fd: FileHandle,
    readonly tree: GatewayTree,
    readonly pendingId: number | null,
    private owner: StagedFiles,
  ) {}

  get path(): string {
    return uiPath(this.place);
  }

  /**
   * Writes `data` at `offset`; false when the stage was sealed meanwhile (write to the next one).
   * An UNSTABLE write (`sync` false) is answered as soon as it is started, while its bytes go to the
   * stage (a sequential client sends the next WRITE only once answered: the two overlap); `keep`
   * holds the caller's buffer until then (rpc.ts CallContext.keep). At most BEHIND_MAX such writes
   * run per stage and BEHIND_TOTAL in all (past them a write is answered once written); READ,
   * SETATTR and publishing wait for them, and publishing fails if one failed. A FILE_SYNC write is
   * answered once its bytes are on disk.
   */
  async write(offset: number, data: Buffer, sync: boolean, keep: () => () => void): Promise<boolean> {
    // A write over bytes still on their way waits for them: the later WRITE's bytes must win.
    const end = offset + data.length;
    for (const [done, [from, to]] of this.behind) if (from < end && offset < to) await done;
    if (this.sealed) return false;
    this.inflight++;
    if (!sync && this.behind.size < BEHIND_MAX && this.owner.writesBehind < BEHIND_TOTAL) {
      const release = keep();
      this.owner.writesBehind++;
      const done: Promise<void> = this.fd
        .write(data, 0, data.length, offset)
        .then(
          () => undefined,
          (e) => void (this.failed ??= e),
        )
        .finally(() => {
          release();
          this.owner.writesBehind--;
          this.behind.delete(done);
          this.settle();
        });
      this.behind.set(done, [offset, end]);
    } else {
      // FILE_SYNC, or too many bytes still on their way to the disk: answered once written.
      try {
        await this.fd.write(data, 0, data.length, offset);
        if (sync) await this.fd.datasync();
      } finally {
        this.settle();
      }
    }
    this.size = Math.max(this.size, offset + data.length);
    this.later(sync ? SYNC_QUIET_MS : QUIET_MS);
    return true;
  }

  private settle(): void {
    if (--this.inflight === 0) this.idle?.();
  }

  async truncate(size: number): Promise<void> {
    await Promise.all(this.behind.keys());
    await this.fd.truncate(size);
    this.size = size;
    this.later(QUIET_MS);
  }

  /** Up to `len` bytes at `offset` of what was written so far. */
  async read(offset: number, len: number): Promise<Buffer> {
    await Promise.all(this.behind.keys());
    const n = Math.max(0, Math.min(len, this.size - offset));
    const { buffer, bytesRead } = await this.fd.read(Buffer.allocUnsafe(n), 0, n, offset);
    return buffer.subarray(0, bytesRead);
  }

  private later(ms: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(
      () => void this.publish().catch((e) => this.owner.log.warn(`nfs: ${this.path} was not published: ${e?.code ?? e?.message ?? e}`)),
      ms,
    );
    this.timer.unref();
  }

  /** Publishes the stage (once; later calls wait for the same). The stage is gone after, published or not. */
  publish(): Promise<void> {
    this.published ??= (async () => {
      this.sealed = true;
      if (this.timer) clearTimeout(this.timer);
      if (this.inflight > 0) await new Promise<void>((r) => (this.idle = r));
      try {
        if (this.failed) throw this.failed;
        const size = (await this.fd.stat()).size;
        // Read through the stage's own descriptor (the file itself may be moved into place meanwhile).
        const body = this.fd.createReadStream({ start: 0, highWaterMark: 1 << 20, autoClose: false });
        await this.tree.write(this.path, body, { size, overwrite: true, fromFile: size >= MOVE_MIN ? this.file : undefined });
      } finally {
        await this.owner.done(this, true);
        await this.fd.close().catch(() => undefined);
        await rm(this.file, { force: true });
      }
    })();
    return this.published;
  }

  /** Drops the stage without publishing (the file was removed). */
  async discard(): Promise<void> {
    this.sealed = true;
    if (this.timer) clearTimeout(this.timer);
    await this.owner.done(this, false);
    await this.fd.close().catch(() => undefined);
    await rm(this.file, { force: true });
  }
}

export class StagedFiles {
  private byPlace = new Map<string, Staged>();
  private pending = new Map<number, Staged>();
  /** Pending ids of files published since, and the node each became (handles made at CREATE keep working). */
  private publishedPending = new Map<number, number>();
  private nextPending = 1;
  private ready: Promise<void>;

  /** `idAt`: the catalogue node at a place now (a published file's). */
  constructor(
    private dir: string,
    readonly log: Logger,
    private idAt: (storageId: number, rel: string) => Promise<number | null>,
  ) {
    // Stages left by a crash are of no use: their clients resend after the write verifier changes.
    this.ready = rm(dir, { recursive: true, force: true })
      .then(() => mkdir(dir, { recursive: true }))
      .then(() => undefined);
  }

  /** The stage of the file at `p`, if one is being written. */
  at(p: { storageId: number; rel: string }): Staged | undefined {
    return this.byPlace.get(keyOf(p));
  }

  /** Where pending file `id` is: being written (stage) or published since (its node); null when unknown (STALE). */
  pendingById(id: number): { stage: Staged } | { node: number } | null {
    const s = this.pending.get(id);
    if (s) return { stage: s };
    const node = this.publishedPending.get(id);
    return node === undefined ? null : { node };
  }

  /** A new empty file (CREATE) that other doors will not see until published; replaces a stage at `p`. */
  async create(tree: GatewayTree, p: Place): Promise<Staged> {
    await this.at(p)?.discard();
    return this.start(tree, p, this.nextPending++, null);
  }

  /** The stage to write the file at `p` in: the open one, else a new one holding the file's bytes (`size` of them: 0 = start empty). */
  async forWrite(tree: GatewayTree, p: Place, size: number): Promise<Staged> {
    const open = this.at(p);
    if (open && !open.sealed) return open;
    if (open) await open.publish().catch(() => undefined);
    return this.at(p) ?? this.start(tree, p, null, size > 0 ? () => tree.files.read(uiPath(p)) : null);
  }

  private async start(tree: GatewayTree, p: Place, pendingId: number | null, seed: (() => Promise<NodeJS.ReadableStream>) | null): Promise<Staged> {
    await this.ready;
    const file = join(this.dir, `${randomBytes(9).toString('base64url')}.part`);
    if (seed) await pipeline(await seed(), createWriteStream(file, { flags: 'wx' }));
    const fd = await open(file, seed ? 'r+' : 'wx+');
    const s = new Staged(p, file, fd, tree, pendingId, this);
    if (seed) s.size = (await fd.stat()).size;
    // Another call may have started one while this one seeded: keep the first, drop this.
    const raced = this.at(p);
    if (raced && !raced.sealed) {
      await s.discard();
      return raced;
    }
    this.byPlace.set(keyOf(p), s);
    if (pendingId !== null) this.pending.set(pendingId, s);
    return s;
  }

  /** UNSTABLE writes of every stage answered and still being written (Staged.write). */
  writesBehind = 0;

  /** Told when a stage is finished (published or dropped): what was kept of its place is out of date. */
  onDone: (p: Place) => void = () => undefined;

  /** A stage is finished: published (its pending handle now names the file) or dropped. */
  async done(s: Staged, published: boolean): Promise<void> {
    if (this.byPlace.get(keyOf(s.place)) === s) this.byPlace.delete(keyOf(s.place));
    this.onDone(s.place);
    if (s.pendingId !== null && this.pending.get(s.pendingId) === s) {
      this.pending.delete(s.pendingId);
      const node = published ? await this.idAt(s.place.storageId, s.place.rel) : null;
      if (node !== null) this.publishedPending.set(s.pendingId, node);
      if (this.publishedPending.size > PUBLISHED_MEMORY) this.publishedPending.delete(this.publishedPending.keys().next().value!);
    }
  }

  /** Publishes every open stage (the gateway is stopping). */
  async flush(): Promise<void> {
    await Promise.allSettled([...this.byPlace.values()].map((s) => s.publish()));
  }

  /** Stages open now (for the admin's view and tests). */
  get count(): number {
    return this.byPlace.size;
  }
}
