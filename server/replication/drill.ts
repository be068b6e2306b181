/**
 * The restore drill (verified backups, second part): restores one sampled
 * folder of a linked storage from its replica into a scratch folder in the
 * data dir (never onto a storage), then compares every restored file with
 * the primary by sha256, both streamed. The result is kept in one row and
 * carried by the report; the scratch folder is removed afterwards. The drill
 * is the installation's: it samples a folder of any tenant's linked storage.
 */
import { DEFAULT_TENANT } from '../db';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { ReplicaDrill } from '../contract';
import { AppError } from '../errors';
import type { JobContext, JobQueue, Scheduler } from '../jobs';
import { isInternalPath, joinRel, uiPath } from '../lib/paths';
import { hashOf, tree, type ReplicationEngine } from './engine';
import type { Among, ReplicationRepo } from './replication.repo';
import { armCron } from './schedule';

export interface DrillPayload {
  /** UI path of the folder to drill; a random folder of a linked storage when absent. */
  storage_id?: number;
  rel?: string;
}

declare module '../jobs/types' {
  interface JobPayloads {
    'replica.drill': DrillPayload;
  }
}

export const DRILL_SCHEDULE = 'replica.drill';

/** At most this many files are restored per drill. */
export const DRILL_MAX_FILES = 200;

export class RestoreDrill {
  constructor(
    private repo: ReplicationRepo,
    private engine: ReplicationEngine,
    private queue: JobQueue,
    private scratchDir: string,
    private everyTenant: () => Promise<Among>,
  ) {}

  register(): void {
    this.queue.register('replica.drill', (ctx) => this.run(ctx), { concurrency: 1, maxAttempts: 1, timeoutMs: 3_600_000, governed: 'lane' });
  }

  /**
   * Queues a drill (one runs at a time); the same request still queued absorbs it. With no storage (or not
   * the one given) backed up to an enabled target there is nothing to restore from: `no_backup_target`.
   */
  async request(p: DrillPayload = {}): Promise<string> {
    if (!(await this.repo.linkedStorageIds(await this.everyTenant(), p.storage_id)).length)
      throw new AppError('no_backup_target', {}, undefined, 'no storage is backed up to an enabled target');
    const key = `replica.drill:${p.storage_id ?? ''}:${p.rel ?? ''}`;
    return this.queue.enqueue('replica.drill', p, { tenant: DEFAULT_TENANT, dedupKey: key, behindRunning: true, priority: -2 });
  }

  /** (Re)arms the drill schedule from `cron`; removed when empty (or, logged, when invalid). */
  schedule(scheduler: Scheduler, cron: string, log: (msg: string, err?: unknown) => void): void {
    // Nothing backed up: a scheduled drill is skipped, not recorded as a drill of nothing.
    armCron(
      scheduler,
      DRILL_SCHEDULE,
      cron,
      async () => void ((await this.repo.linkedStorageIds(await this.everyTenant())).length && (await this.request())),
      log,
    );
  }

  async last(): Promise<ReplicaDrill | null> {
    const r = await this.repo.drill();
    return r ? (JSON.parse(r) as ReplicaDrill) : null;
  }

  private async run(ctx: JobContext<DrillPayload>): Promise<ReplicaDrill> {
    const pick =
      ctx.payload.storage_id !== undefined
        ? { storage_id: ctx.payload.storage_id, rel: ctx.payload.rel ?? '' }
        : await this.repo.sampleFolder(await this.everyTenant());
    const out: ReplicaDrill = {
      ran_at: new Date().toISOString(),
      folder: null,
      files: 0,
      bytes: 0,
      identical: 0,
      differing: [],
      missing_on_replica: [],
      ok: false,
    };
    if (!pick) return this.save(out);
    const sides = await this.engine.sides(pick.storage_id);
    if (!sides) return this.save(out);
    out.folder = uiPath(sides.storage, pick.rel);
    const scratch = join(this.scratchDir, `replica-drill-${randomBytes(6).toString('hex')}`);
    try {
      const modeOf = await this.engine.modes(sides.tenant);
      const files = (await tree(sides.primary, pick.rel, ctx.signal))
        .filter((e) => e.type === 'file' && !isInternalPath(joinRel(pick.rel, e.path)) && modeOf(sides.storage, joinRel(pick.rel, e.path)) !== 'skip')
        .slice(0, DRILL_MAX_FILES);
      for (const f of files) {
        ctx.signal.throwIfAborted();
        const rel = joinRel(pick.rel, f.path);
        const local = join(scratch, f.path);
        await mkdir(dirname(local), { recursive: true });
        try {
          await pipeline(await sides.target.read(rel, undefined, ctx.signal), createWriteStream(local), { signal: ctx.signal });
        } catch (e) {
          if (ctx.signal.aborted) throw e;
          out.missing_on_replica.push(uiPath(sides.storage, rel));
          continue;
        }
        out.files++;
        const [restored, primary] = await Promise.all([hashLocal(local), hashOf(sides.primary, rel, ctx.signal)]);
        out.bytes += restored.bytes;
        if (primary !== null && restored.hex === primary) out.identical++;
        else if (primary !== null) out.differing.push(uiPath(sides.storage, rel));
      }
      out.differing = out.differing.slice(0, 50);
      out.missing_on_replica = out.missing_on_replica.slice(0, 50);
      out.ok = out.differing.length === 0 && out.missing_on_replica.length === 0;
      return this.save(out);
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  }

  private async save(r: ReplicaDrill): Promise<ReplicaDrill> {
    await this.repo.saveDrill(JSON.stringify(r));
    return r;
  }
}

async function hashLocal(path: string): Promise<{ hex: string; bytes: number }> {
  const h = createHash('sha256');
  let bytes = 0;
  for await (const chunk of createReadStream(path)) {
    bytes += (chunk as Buffer).length;
    h.update(chunk as Buffer);
  }
  return { hex: h.digest('hex'), bytes };
}
