export type OpStatus = 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';
/** A plugin job's op row uses its own words (spec: Operation status). */
export type PluginOpStatus = 'pending' | 'running' | 'ok' | 'failed' | 'cancelled';

/** The spec's Operation (`GET /api/files/ops`, realtime `op` frames). */
export interface Operation {
  id: string;
  kind: string;
  status: OpStatus | PluginOpStatus;
  progress: number;
  started_at: string | null;
  finished_at: string | null;
  created_at: string;
  eta_seconds: number | null;
  bytes_done: number;
  bytes_total: number;
  message: string | null;
  result: unknown;
  error_code: string | null;
  error_params: Record<string, unknown> | null;
  error_text: string | null;
  error: string | null;
  attempts: number;
  /** Plugin jobs (spec: Operation) add these. */
  plugin?: string;
  action?: string;
  label?: string;
  outputs?: Array<{ path: string }>;
  open?: { path: string; view?: string; action?: string };
}
