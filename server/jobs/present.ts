/** An op's row as the spec's Operation object (the API's and the realtime frames' shape). */
import type { OpsTable } from '../db/tables';
import type { Operation } from './types';

/** Row → the spec's Operation object. */
export function present(r: OpsTable): Operation {
  const started = r.started_at ? Date.parse(r.started_at) : null;
  let eta: number | null = null;
  if (r.status === 'running' && started && r.progress > 0.01 && r.progress < 1)
    eta = Math.round((((Date.now() - started) / r.progress) * (1 - r.progress)) / 1000);
  return {
    id: r.id,
    kind: r.kind,
    status: r.status,
    progress: r.progress,
    started_at: r.started_at,
    finished_at: r.finished_at,
    created_at: r.created_at,
    eta_seconds: eta,
    bytes_done: r.bytes_done,
    bytes_total: r.bytes_total,
    message: r.message,
    result: r.result ? JSON.parse(r.result) : null,
    error_code: r.status === 'failed' ? r.error_code : null,
    error_params: r.status === 'failed' && r.error_params ? JSON.parse(r.error_params) : null,
    error_text: r.status === 'failed' ? r.error_text : null,
    error: r.status === 'failed' ? r.error_text : null,
    attempts: r.attempts,
  };
}
