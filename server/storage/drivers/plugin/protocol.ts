/**
 * Wire constants of `filedock-storage/1` (docs/plugin-driver-protocol.md):
 * JSON-RPC 2.0, one message per line on the plugin's stdin/stdout, bodies as
 * base64 `body.*` notifications with a per-stream credit window.
 */
import type { ErrorCode } from '../../../errors';

export const PROTOCOL = 'filedock-storage/1';
/** Most decoded body bytes a sender may have in flight per stream before a `body.ack`. */
export const WINDOW_BYTES = 1024 * 1024;
/** Largest decoded body chunk in one `body.chunk`. */
export const CHUNK_BYTES = 256 * 1024;
/** Longest accepted line; a longer one is a protocol violation and ends the process. */
export const MAX_LINE_BYTES = 4 * 1024 * 1024;

/** Codes a plugin may put in `error.data.code`; any other becomes `storage_unreachable`. */
export const PLUGIN_ERROR_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'not_found',
  'conflict',
  'storage_unreachable',
  'permission_denied',
  'name_not_allowed',
  'name_too_long',
  'unsupported',
  'cancelled',
  'validation_failed',
  'bad_path',
  'quota_exceeded',
]);

/** JSON-RPC's own code for an unknown method; mapped to `unsupported`. */
export const METHOD_NOT_FOUND = -32601;

export interface RpcError {
  code: number;
  message: string;
  data?: { code?: string; params?: Record<string, unknown> };
}

export interface RpcMessage {
  jsonrpc: '2.0';
  id?: number;
  method?: string;
  params?: Record<string, unknown>;
  result?: unknown;
  error?: RpcError;
}
