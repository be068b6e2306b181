/**
 * What replication needs of a storage driver, structurally (the module may
 * not import `server/storage/`: the composition root hands it drivers and the
 * catalogue's config rules). The storage contract's comments apply.
 */
import type { Readable } from 'node:stream';
import type { ReplicaFailureCode, ReplicaMode, ReplicaOp, ReplicaTargetMode } from '../contract';

export interface REntry {
  name: string;
  type: 'file' | 'dir';
  size: number;
  mtime: number;
  mime?: string;
}

export interface RDriver {
  stat(path: string): Promise<REntry>;
  list(dir: string): AsyncIterable<REntry>;
  read(path: string, range?: { start: number; end?: number }, signal?: AbortSignal): Promise<Readable>;
  write(path: string, body: Readable, opts?: { size?: number; mime?: string; overwrite?: boolean; signal?: AbortSignal }): Promise<REntry>;
  mkdir(path: string): Promise<void>;
  delete(path: string): Promise<void>;
  close(): Promise<void>;
  walk?(prefix: string, signal?: AbortSignal): AsyncIterable<REntry & { path: string }>;
  move?(from: string, to: string, opts: { overwrite: boolean }): Promise<void>;
  copy?(from: string, to: string, opts: { overwrite: boolean; signal?: AbortSignal }): Promise<void>;
  statLocal?(path: string, o?: { open?: boolean }): Promise<{ entry: REntry; path: string | null; fd?: number; bytes?: Buffer }>;
  multipart?: {
    init(path: string, opts: { size: number; partSize: number; mime?: string }): Promise<{ handle: string }>;
    complete(handle: string, parts: Array<{ part: number; etag: string }>): Promise<REntry>;
  };
}

export type { ReplicaMode, ReplicaOp };
export type TargetMode = ReplicaTargetMode;
export type FailureCode = ReplicaFailureCode;
export const REPLICA_MODES: readonly ReplicaMode[] = ['mirror', 'append_only', 'skip'];
/** A failure row's op (spec); `mkdir` is replicated as a `write` of a folder. */
export const REPLICA_OPS: readonly ReplicaOp[] = ['write', 'delete', 'move', 'copy'];

/** One replication job: bring `rel` (and for move/copy `to`) of storage `storage_id` to the target. */
export interface CopyPayload {
  storage_id: number;
  op: ReplicaOp;
  rel: string;
  to?: string;
  /** A copy read from this primary path instead of `rel` (an append_only file moved away, e.g. into the trash). */
  from?: string;
}

/** A Fix run's retry of one failure row. */
export interface RetryPayload {
  failure_id: number;
}

declare module '../jobs/types' {
  interface JobPayloads {
    'replica.copy': CopyPayload;
    replica_retry: RetryPayload;
  }
}

/** Replication's events (spec: Events); the bell and webhooks know them by name. */
export interface ReplicaEventPayload {
  title: string;
  body: string;
  [k: string]: unknown;
}
declare module '../events/types' {
  interface EventMap {
    replica_fail: ReplicaEventPayload;
    primary_read_fail: ReplicaEventPayload;
    replica_reconcile_done: ReplicaEventPayload;
    replica_status_report: ReplicaEventPayload;
  }
}
