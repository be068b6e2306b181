/**
 * Verified backups, first part: the audit compares content hashes of the
 * primary and the target, a random sample of each linked storage's files
 * (daily) or all of them (monthly, or on request), and queues a repair for
 * every copy that is missing or differs (logged as a failure with code
 * `REPLICA_AUDIT_MISMATCH`, so Fix and the report see it). Paths a rule skips
 * are not audited. The last result is kept in one row and shown in the report.
 * The audit is the installation's (every tenant's linked storages, each under
 * its tenant's rules); a failure it records is its storage's tenant's.
 */
import { DEFAULT_TENANT } from '../db';
import type { ReplicaAudit as ReplicaAuditView } from '../contract';
import type { EventBus } from '../events';
import type { JobContext, JobQueue, Scheduler } from '../jobs';
import { isInternalPath, uiPath } from '../lib/paths';
import { hashOf, tree, type ReplicationEngine } from './engine';
import type { SettingsStore } from '../settings';
import type { Among, ReplicationRepo } from './replication.repo';
import { armCron } from './schedule';
import type { RDriver } from './types';

export interface AuditPayload {
  kind: 'sample' | 'full';
  /** Files per storage for a sample. */
  sample?: number;
}

declare module '../jobs/types' {
  interface JobPayloads {
    'replica.audit': AuditPayload;
  }
}

/** `unreadable`: files the primary could not be read for (not counted as mismatches). */
export type AuditResult = ReplicaAuditView;

const AUDIT_DAILY = 'replica.audit.daily';
const AUDIT_MONTHLY = 'replica.audit.monthly';

export class ReplicaAudit {
  constructor(
    private repo: ReplicationRepo,
    private engine: ReplicationEngine,
    private queue: JobQueue,
    private bus: EventBus,
    private settings: SettingsStore,
    private everyTenant: () => Promise<Among>,
  ) {}

  register(): void {
    this.queue.register('replica.audit', (ctx) => this.run(ctx), { concurrency: 1, maxAttempts: 1, governed: 'lane' });
  }

  /** Queues an audit (one runs at a time); the same request still queued absorbs it. */
  request(kind: 'sample' | 'full', sample = this.settings.get('replica_audit_sample_size')): Promise<string> {
    const key = `replica.audit:${kind}:${kind === 'sample' ? sample : ''}`;
    return this.queue.enqueue('replica.audit', { kind, sample }, { tenant: DEFAULT_TENANT, dedupKey: key, behindRunning: true, priority: -2 });
  }

  async last(): Promise<AuditResult | null> {
    const r = await this.repo.audit();
    return r ? (JSON.parse(r) as AuditResult) : null;
  }

  /** (Re)arms both schedules from the settings (by default a daily sample at 04:30, a full audit on the 1st at 05:00, server time). */
  schedule(scheduler: Scheduler, log: (msg: string, err?: unknown) => void): void {
    armCron(scheduler, AUDIT_DAILY, this.settings.get('replica_audit_cron'), () => this.request('sample'), log);
    armCron(scheduler, AUDIT_MONTHLY, this.settings.get('replica_audit_full_cron'), () => this.request('full'), log);
  }

  private async run(ctx: JobContext<AuditPayload>): Promise<AuditResult> {
    const out: AuditResult = { ran_at: new Date().toISOString(), kind: ctx.payload.kind, checked: 0, missing: 0, mismatched: 0, unreadable: 0, repaired: [] };
    for (const s of await this.repo.storages(await this.everyTenant())) {
      if (!s.replica_target_id) continue;
      ctx.signal.throwIfAborted();
      const modeOf = await this.engine.modes(s);
      const sides = await this.engine.sides(s.id).catch(() => null);
      if (!sides) continue;
      const files =
        ctx.payload.kind === 'full'
          ? (await tree(sides.primary, '', ctx.signal)).filter((e) => e.type === 'file').map((e) => e.path)
          : await this.repo.sampleFiles(s, ctx.payload.sample ?? this.settings.get('replica_audit_sample_size'));
      for (const rel of files) {
        if (isInternalPath(rel) || modeOf(s.name, rel) === 'skip') continue;
        ctx.signal.throwIfAborted();
        const a = await sha256(sides.primary, rel, ctx.signal);
        if (a === null || a === 'error') {
          if (a === 'error') out.unreadable++;
          continue;
        }
        out.checked++;
        const b = await sha256(sides.target, rel, ctx.signal);
        if (b === a) continue;
        if (b === null) out.missing++;
        else out.mismatched++;
        const { row, opened } = await this.repo.recordFailure(s, {
          storage_id: s.id,
          rel,
          op: 'write',
          to_rel: null,
          from_rel: null,
          code: 'REPLICA_AUDIT_MISMATCH',
          message:
            b === null
              ? 'audit: missing on the target'
              : b === 'error'
                ? 'audit: the target copy cannot be read'
                : 'audit: the target copy differs from the primary',
        });
        if (opened)
          await this.bus.emit(s, 'replica_fail', {
            title: 'Backup copy differs',
            body: `${uiPath(s.name, rel)}: ${row.message}`,
            path: uiPath(s.name, rel),
            op: 'write',
            code: row.code,
          });
        this.engine.enqueue(s, { storage_id: s.id, op: 'write', rel });
        if (out.repaired.length < 20) out.repaired.push(uiPath(s.name, rel));
      }
    }
    await this.repo.saveAudit(JSON.stringify(out));
    return out;
  }
}

/** `hashOf`, with 'error' for a file that cannot be read (the audit records it and goes on). */
function sha256(d: RDriver, rel: string, signal: AbortSignal): Promise<string | null | 'error'> {
  return hashOf(d, rel, signal).catch((e) => {
    if (signal.aborted) throw e;
    return 'error' as const;
  });
}
