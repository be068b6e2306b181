/** Admin replication shapes (spec: Replication; docs/replication.md). */
import type { ConfiguredBackend } from './admin';

export type ReplicaMode = 'mirror' | 'append_only' | 'skip';
export type ReplicaTargetMode = 'async' | 'sync';
/** A failure row's op; an mkdir is a `write` of a folder. */
export type ReplicaOp = 'write' | 'delete' | 'move' | 'copy';
export type ReplicaFailureCode = 'REPLICA_WRITE_FAIL' | 'PRIMARY_READBACK_FAIL' | 'REPLICA_NO_WRITER' | 'REPLICA_AUDIT_MISMATCH';

/** `GET /api/admin/replication-targets/:id`; `config` shows every set secret as `***`. */
export interface ReplicaTarget extends ConfiguredBackend {
  mode: ReplicaTargetMode;
  enabled: boolean;
  /** Storages linked to it (`replica_target_id`). */
  storage_ids: number[];
  created_at: string;
  updated_at: string;
}

export interface ReplicaRule {
  id: number;
  path_pattern: string;
  mode: ReplicaMode;
  /** Lower wins. */
  priority: number;
  enabled: boolean;
  description: string | null;
  created_at: string;
  updated_at: string;
}

export interface ReplicaSettings {
  report_cron: string;
  report_enabled: boolean;
  default_mode: ReplicaMode;
  /** When the restore drill runs on its own (cron); empty = only on request. */
  drill_cron: string;
  /** When the sampled content audit runs on its own (cron); empty = only on request. */
  audit_cron: string;
  /** When the full content audit runs on its own (cron); empty = only on request. */
  audit_full_cron: string;
  /** Files per linked storage in a sampled audit (1..100000). */
  audit_sample_size: number;
}

export interface ReplicaFailure {
  id: number;
  /** UI path `/<storage>/<rel>`. */
  path: string;
  storage_id: number;
  op: ReplicaOp;
  /** Destination of a move, as a UI path. */
  to: string | null;
  code: ReplicaFailureCode;
  message: string;
  attempts: number;
  created_at: string;
  updated_at: string;
  resolved_at: string | null;
}

/**
 * `GET /api/admin/replica/status`, live: the recovery point (RPO) is the age
 * of the oldest change not yet on its target; `rpo_warn` (amber in a UI) when
 * it is above `rpo_warn_s`.
 */
export interface ReplicaStatus {
  /** Whether any storage is backed up to an enabled target; false = no backups at all (the other figures are then 0). */
  linked: boolean;
  rpo_s: number;
  oldest_pending_at: string | null;
  rpo_warn: boolean;
  rpo_warn_s: number;
  queued_copies: number;
  unresolved: number;
}

/** `GET /api/admin/replica/report` (204 before the first run). */
export interface ReplicaReport {
  ran_at: string;
  unresolved: number;
  repaired_24h: number;
  actionable: boolean;
  /** The recovery point when the report ran (see ReplicaStatus). */
  rpo_s: number;
  rpo_warn: boolean;
  /** The last content audit, or null before the first. */
  audit: ReplicaAudit | null;
  /** The last restore drill, or null before the first. */
  drill: ReplicaDrill | null;
  targets: Array<{ id: number; name: string; driver: string; mode: ReplicaTargetMode; enabled: boolean; storages: string[] }>;
}

/** The last content audit (`GET /api/admin/replica/audit`, and in the report). */
export interface ReplicaAudit {
  ran_at: string;
  kind: 'sample' | 'full';
  checked: number;
  missing: number;
  mismatched: number;
  unreadable: number;
  /** Up to 20 UI paths queued for repair. */
  repaired: string[];
}

/** The last restore drill (`GET /api/admin/replica/drill`, and in the report). */
export interface ReplicaDrill {
  ran_at: string;
  /** UI path of the folder restored; null when no storage has an enabled target. */
  folder: string | null;
  files: number;
  bytes: number;
  identical: number;
  /** Restored files whose bytes differ from the primary (at most 50). */
  differing: string[];
  /** Files the replica could not give back (at most 50). */
  missing_on_replica: string[];
  /** Every restored file identical and none missing. */
  ok: boolean;
}
