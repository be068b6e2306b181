/**
 * The spec's File entry, built in two places that must agree: in SQL (the
 * listing and search pages, serialised by SQLite so 1,000 rows cost no
 * JavaScript objects) and in JavaScript (single entries after a write).
 */
import { isImage, isVideo, parseItems, type FileLock, type GateNode, type Level, type NodeRow } from '../catalogue';
import type { FileEntry } from '../contract';

export type { FileEntry };

/** The content tag of a file: the backend's own, else one derived from size and mtime. */
export function etagOf(size: number, mtime: number, backendEtag?: string | null): string {
  return backendEtag ? backendEtag : `"${size.toString(16)}-${Math.round(mtime).toString(16)}"`;
}

/** The ETag header's form of `etagOf` (a backend's etag may come unquoted). */
export const servedEtag = (size: number, mtime: number, backendEtag?: string | null): string => {
  const raw = etagOf(size, mtime, backendEtag);
  return raw.startsWith('"') ? raw : `"${raw}"`;
};

/** ISO 8601 of an epoch-ms mtime (0 stays the epoch, as SQLite prints it). */
export const isoOf = (mtime: number): string => new Date(Math.round(mtime)).toISOString();

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

/** App locks as entry fields: none, or those of the `fl` row a listing joined (lockJoin). */
const NO_LOCK = `'locked', json('false'), 'lock', NULL`;
const JOINED_LOCK = `'locked', json(CASE WHEN fl.node_id IS NULL THEN 'false' ELSE 'true' END),
    'lock', CASE WHEN fl.node_id IS NULL THEN NULL ELSE json_object('plugin', fl.plugin, 'plugin_label', fl.plugin_label,
      'reason', fl.reason, 'reason_text', fl.reason_text, 'until', fl.until) END`;

/**
 * The join a query adds (after `FROM nodes <alias>`) when it builds entries
 * `withLocks`: only for storages that hold a lock (FileLocks.any), so a
 * listing of any other storage costs what it did without locks. An expired
 * lock shows until its timer removes it, moments later (the folder's pages
 * are dropped then).
 */
export const lockJoin = (nodes: string): string => ` LEFT JOIN file_locks fl ON fl.node_id = ${nodes}.id`;

function sqliteEntryJson(withLocks: boolean): string {
  return `CASE WHEN type = 'dir' THEN json_object(
    'id', id, 'name', name, 'type', 'dir', 'size', 0,
    'modified', strftime('%Y-%m-%dT%H:%M:%fZ', mtime / 1000.0, 'unixepoch'),
    'is_image', json('false'), 'is_video', json('false'), 'thumb_url', '',
    ${NO_LOCK}, 'app_state', json(COALESCE(app_state, '[]')), 'perm', @perm)
  ELSE json_object(
    'id', id, 'name', name, 'type', 'file', 'size', size,
    'modified', strftime('%Y-%m-%dT%H:%M:%fZ', mtime / 1000.0, 'unixepoch'),
    'mime', COALESCE(mime, 'application/octet-stream'),
    'etag', COALESCE(etag, printf('"%x-%x"', size, mtime)),
    'is_image', json(CASE WHEN mime LIKE 'image/%' THEN 'true' ELSE 'false' END),
    'is_video', json(CASE WHEN mime LIKE 'video/%' THEN 'true' ELSE 'false' END),
    'thumb_url', CASE WHEN thumb_state = 'ready' THEN '${THUMB_MARK}' || id ELSE '' END, ${withLocks ? JOINED_LOCK : NO_LOCK},
    'app_state', json(COALESCE(app_state, '[]')), 'perm', @perm) END`;
}

/** The same on PostgreSQL: json_build_object keeps the key order; its text has spaces after colons. */
const PG_NO_LOCK = `'locked', false, 'lock', NULL`;
const PG_JOINED_LOCK = `'locked', fl.node_id IS NOT NULL,
    'lock', CASE WHEN fl.node_id IS NULL THEN NULL ELSE json_build_object('plugin', fl.plugin, 'plugin_label', fl.plugin_label,
      'reason', fl.reason, 'reason_text', fl.reason_text, 'until', fl.until) END`;

function postgresEntryJson(withLocks: boolean): string {
  return `(CASE WHEN type = 'dir' THEN json_build_object(
    'id', id, 'name', name, 'type', 'dir', 'size', 0,
    'modified', to_char(to_timestamp(mtime / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'is_image', false, 'is_video', false, 'thumb_url', '',
    ${PG_NO_LOCK}, 'app_state', COALESCE(app_state, '[]')::json, 'perm', @perm::text)
  ELSE json_build_object(
    'id', id, 'name', name, 'type', 'file', 'size', size,
    'modified', to_char(to_timestamp(mtime / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'mime', COALESCE(mime, 'application/octet-stream'),
    'etag', COALESCE(etag, '"' || to_hex(size) || '-' || to_hex(mtime) || '"'),
    'is_image', mime LIKE 'image/%',
    'is_video', mime LIKE 'video/%',
    'thumb_url', CASE WHEN thumb_state = 'ready' THEN '${THUMB_MARK}' || id ELSE '' END, ${withLocks ? PG_JOINED_LOCK : PG_NO_LOCK},
    'app_state', COALESCE(app_state, '[]')::json, 'perm', @perm::text) END)::text`;
}

/**
 * SQL expression (over a `nodes` row) yielding one entry as JSON text, built
 * in the database; `@perm` is bound to the caller's level. `mime` and `etag`
 * appear on files only. `withLocks` also reads the joined lock (lockJoin).
 */
export const entryJsonSql = (dialect: 'sqlite' | 'postgres', withLocks = false): string =>
  dialect === 'postgres' ? postgresEntryJson(withLocks) : sqliteEntryJson(withLocks);

/** The same entry as entryJsonSql, from a node row in memory and its live lock. */
export function presentNode(n: NodeRow | GateNode, perm: Level, lock: FileLock | null = null): FileEntry {
  const base = {
    id: n.id,
    name: n.name,
    type: n.type,
    size: n.type === 'dir' ? 0 : n.size,
    modified: isoOf(n.mtime),
    is_image: false,
    is_video: false,
    thumb_url: '',
    locked: false,
    lock: null,
    app_state: parseItems(n.app_state),
    perm,
  } as FileEntry;
  if (n.type === 'file' && lock) {
    base.locked = true;
    base.lock = { plugin: lock.plugin, plugin_label: lock.plugin_label, reason: lock.reason, reason_text: lock.reason_text, until: lock.until };
  }
  if (n.type === 'file') {
    base.mime = n.mime ?? 'application/octet-stream';
    base.etag = etagOf(n.size, n.mtime, n.etag);
    base.is_image = isImage(n.mime);
    base.is_video = isVideo(n.mime);
  }
  return base;
}
