/**
 * The spec's File entry, built in two places that must agree: in SQL (the
 * listing and search pages, serialised by SQLite so 1,000 rows cost no
 * JavaScript objects) and in JavaScript (single entries after a write).
 */
import type { GateNode, Level, NodeRow } from '../catalogue';
import type { FileEntry } from '../contract';

export type { FileEntry };
import { isImage, isVideo } from '../catalogue';

/** The content tag of a file: the backend's own, else one derived from size and mtime. */
export function etagOf(size: number, mtime: number, backendEtag?: string | null): string {
  return backendEtag ? backendEtag : `"${size.toString(16)}-${Math.round(mtime).toString(16)}"`;
}

/** ISO 8601 of an epoch-ms mtime (0 stays the epoch, as SQLite prints it). */
export const isoOf = (mtime: number): string => new Date(Math.round(mtime)).toISOString();

/**
 * SQL expression (over a `nodes` row) yielding one entry as JSON text. `?` is
 * bound to the caller's level (`perm`). `mime` and `etag` appear on files only.
 */
/**
 * SQLite cannot sign: ready thumbnails leave `THUMB_MARK<id>` in the JSON and
 * `stampThumbs` swaps each for its signed URL (one pass over the page text).
 */
export const THUMB_MARK = '/api/files/thumb/';
const MARKED = /"\/api\/files\/thumb\/(\d+)"/g;

/** Replaces every unsigned thumbnail mark in `json` with `stamp(id)`. */
export function stampThumbs(json: string, stamp: ((id: number) => string) | undefined): string {
  return stamp ? json.replace(MARKED, (_, id: string) => JSON.stringify(stamp(Number(id)))) : json;
}

const SQLITE_ENTRY_JSON = `CASE WHEN type = 'dir' THEN json_object(
    'id', id, 'name', name, 'type', 'dir', 'size', 0,
    'modified', strftime('%Y-%m-%dT%H:%M:%fZ', mtime / 1000.0, 'unixepoch'),
    'is_image', json('false'), 'is_video', json('false'), 'thumb_url', '',
    'locked', json('false'), 'lock', NULL, 'app_state', json(COALESCE(app_state, '[]')), 'perm', @perm)
  ELSE json_object(
    'id', id, 'name', name, 'type', 'file', 'size', size,
    'modified', strftime('%Y-%m-%dT%H:%M:%fZ', mtime / 1000.0, 'unixepoch'),
    'mime', COALESCE(mime, 'application/octet-stream'),
    'etag', COALESCE(etag, printf('"%x-%x"', size, mtime)),
    'is_image', json(CASE WHEN mime LIKE 'image/%' THEN 'true' ELSE 'false' END),
    'is_video', json(CASE WHEN mime LIKE 'video/%' THEN 'true' ELSE 'false' END),
    'thumb_url', CASE WHEN thumb_state = 'ready' THEN '${THUMB_MARK}' || id ELSE '' END, 'locked', json('false'), 'lock', NULL,
    'app_state', json(COALESCE(app_state, '[]')), 'perm', @perm) END`;

/** The same object on PostgreSQL (json_build_object keeps the key order; its text has spaces after colons). */
const POSTGRES_ENTRY_JSON = `(CASE WHEN type = 'dir' THEN json_build_object(
    'id', id, 'name', name, 'type', 'dir', 'size', 0,
    'modified', to_char(to_timestamp(mtime / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'is_image', false, 'is_video', false, 'thumb_url', '',
    'locked', false, 'lock', NULL, 'app_state', COALESCE(app_state, '[]')::json, 'perm', @perm::text)
  ELSE json_build_object(
    'id', id, 'name', name, 'type', 'file', 'size', size,
    'modified', to_char(to_timestamp(mtime / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'mime', COALESCE(mime, 'application/octet-stream'),
    'etag', COALESCE(etag, '"' || to_hex(size) || '-' || to_hex(mtime) || '"'),
    'is_image', mime LIKE 'image/%',
    'is_video', mime LIKE 'video/%',
    'thumb_url', CASE WHEN thumb_state = 'ready' THEN '${THUMB_MARK}' || id ELSE '' END, 'locked', false, 'lock', NULL,
    'app_state', COALESCE(app_state, '[]')::json, 'perm', @perm::text) END)::text`;

/** A listing entry as JSON text, built in the database (`@perm` names the caller's level). */
export const entryJsonSql = (dialect: 'sqlite' | 'postgres'): string => (dialect === 'postgres' ? POSTGRES_ENTRY_JSON : SQLITE_ENTRY_JSON);


/** The same entry as entryJsonSql, from a node row in memory. */
export function presentNode(n: NodeRow | GateNode, perm: Level): FileEntry {
  const base = {
    id: n.id, name: n.name, type: n.type, size: n.type === 'dir' ? 0 : n.size, modified: isoOf(n.mtime),
    is_image: false, is_video: false, thumb_url: '', locked: false, lock: null, app_state: parseState(n.app_state), perm,
  } as FileEntry;
  if (n.type === 'file') {
    base.mime = n.mime ?? 'application/octet-stream';
    base.etag = etagOf(n.size, n.mtime, n.etag);
    base.is_image = isImage(n.mime);
    base.is_video = isVideo(n.mime);
  }
  return base;
}

function parseState(raw: string | null): string[] {
  if (!raw) return [];
  try {
    const v = JSON.parse(raw);
    return Array.isArray(v) ? v.filter((x) => typeof x === 'string') : [];
  } catch {
    return [];
  }
}
