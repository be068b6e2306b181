import type { TenantScope } from '../db/tenant-tables';
import type { OpJournal } from './journal';

/**
 * Every job name with its payload type. The module that owns a job adds its
 * entry by declaration merging, beside its handler:
 *
 *   declare module '../jobs/types' { interface JobPayloads { 'files.transfer': TransferPayload } }
 *
 * so `register` and `enqueue` are type-checked without this layer importing
 * the modules above it. `jobs-registry.ts` lists every kind once; boot fails
 * when one has no handler, and `test/architecture/jobs.test.ts` checks the list
 * against the handlers the composition root registers (a compile-time check
 * cannot be had: test files declare kinds of their own in the same interface).
 */
// biome-ignore lint/suspicious/noEmptyInterface: declaration merging fills it; an interface (not a type) is what can be merged
export interface JobPayloads {}
export type JobName = keyof JobPayloads;

/** What a handler receives for one attempt. */
export interface JobContext<P = unknown> {
  id: string;
  kind: string;
  payload: P;
  /** The tenant the op belongs to (its enqueuer's): the handler works in it. */
  tenant: TenantScope;
  attempt: number;
  ownerId: number | null;
  /** Fires on cancel, on shutdown and on timeout. */
  signal: AbortSignal;
  /** Reports progress (0..1) and optional byte counts; cheap to call often (throttled). */
  progress(fraction: number, bytes?: { done: number; total: number }, message?: string): void;
  /** What earlier attempts of this op committed (survives restarts; see journal.ts). */
  journal: OpJournal;
  /** True once the server is stopping: the op goes back to the queue and resumes, so keep its staged work. */
  interrupted(): boolean;
}

export interface JobHandlerOptions {
  /** Parallel runs of this kind (default 1). */
  concurrency?: number;
  /** A long op a person waits on (copy, extraction, ZIP build, backup copy): the host keeps the computer awake while one runs (keep-awake.ts). */
  keepsAwake?: boolean;
  /** Attempts before the op fails for good (default 3). */
  maxAttempts?: number;
  /** Backoff before attempt n+1: base * 2^(n-1), capped (default 5 s base, 1 h cap). */
  backoffMs?: number;
  /** Per-attempt timeout; the signal aborts when it passes. */
  timeoutMs?: number;
  /**
   * Background work under the governor (governor.ts): `lane` takes one of its
   * lanes for each run; `io` takes one as an I/O-bound unit, which the CPU
   * budget does not hold back (replication copies); `inside` waits only while
   * background work is paused, because the handler takes a lane per unit of
   * its own (the thumbnail drain).
   */
  governed?: 'lane' | 'io' | 'inside';
}

export type JobHandler<P = any> = (ctx: JobContext<P>) => Promise<unknown>;

export interface EnqueueOptions {
  /**
   * The tenant the op belongs to (docs/tenants.md): the person's for their work, the storage's for system work
   * on one, `DEFAULT_TENANT` for the installation's own (drains, backups). Its progress, list and cancel are
   * found only there, and its change frames reach only that tenant's subscribers.
   */
  tenant: TenantScope;
  priority?: number;
  /** While an op with this key is queued or running, enqueue returns that op instead. */
  dedupKey?: string;
  /**
   * With `dedupKey`: only a queued op absorbs the request; one already running may have read its input
   * before the change that prompted this request, so the new one waits behind it under `<key>#next`.
   */
  behindRunning?: boolean;
  runAt?: Date;
  ownerId?: number | null;
  /** Shown in the user's operations list (`GET /api/files/ops`). */
  visible?: boolean;
  maxAttempts?: number;
}

export type { Operation, OpStatus } from '../contract';
