/**
 * "Download as ZIP" from the file manager: files and folders the caller may
 * read, streamed as one archive of stored entries (like share ZIPs), never
 * buffered. Everything that can refuse the download (access per path, the
 * path count, the size budget, a missing path) is checked while planning,
 * before the first byte; hidden service folders are left out.
 */
import type { Writable } from 'node:stream';
import type { ActorFiles, FileStat, Place } from '../files';
import { AppError } from '../errors';
import { baseName, isInternalName, joinRel, parentRel } from '../lib/paths';
import { ZipWriter } from '../lib/zip-writer';
import { MAX_PATHS } from './archives.service';

/** One entry of the archive to write. */
interface PlanItem {
  place: Place;
  /** Name inside the archive (folders end without a slash; the writer adds it). */
  name: string;
  entry: FileStat;
}

export interface ZipPlan {
  /** `<folder or file>.zip` for one item; for several, named after the folder they share (`files.zip` across storages). */
  filename: string;
  items: PlanItem[];
  /** Sum of the files' sizes. */
  bytes: number;
}

export class DownloadZip {
  /** `maxBytes`: `limits.max_archive_bytes` (0 = no limit). */
  constructor(private maxBytes: number) {}

  /**
   * Checks every path and lists what the archive will hold. Throws
   * `too_many_paths` (over 500), `bad_path` (empty list), `not_found` /
   * `forbidden` per path as the other file routes do, and
   * `archive_too_large` when the files add up to more than the limit.
   */
  async plan(fa: ActorFiles, paths: string[], signal?: AbortSignal): Promise<ZipPlan> {
    if (paths.length === 0) throw new AppError('bad_path', {}, { field: 'path', reason: 'at least one path is required' });
    if (paths.length > MAX_PATHS) throw new AppError('too_many_paths', { max: MAX_PATHS }, { max: MAX_PATHS });
    const targets = paths.map((path) => fa.target(path, 'viewer'));
    const items: PlanItem[] = [];
    const taken = new Set<string>();
    let bytes = 0;
    for (const t of targets) {
      const top = unique(t.rel ? baseName(t.rel) : t.storage.name, taken);
      for (const item of await fa.tree(t.place, signal)) {
        if (item.rel.split('/').some(isInternalName)) continue;
        items.push({
          place: { storage_id: t.storage.id, rel: item.rel === '' ? t.rel : joinRel(t.rel, item.rel) },
          name: item.rel === '' ? top : `${top}/${item.rel}`,
          entry: item.entry,
        });
        if (item.entry.type === 'file') bytes += item.entry.size;
        if (this.maxBytes > 0 && bytes > this.maxBytes) throw new AppError('archive_too_large', { max: this.maxBytes }, { max: this.maxBytes });
      }
    }
    const filename = targets.length === 1 ? `${items[0].name}.zip` : `${sharedFolderName(targets) ?? 'files'}.zip`;
    return { filename, items, bytes };
  }

  /**
   * Writes the planned archive into `out` (stored entries); the writer ends `out`.
   * Rejects when a read fails or `signal` aborts; the caller destroys `out` then.
   */
  async write(fa: ActorFiles, plan: ZipPlan, out: Writable, signal?: AbortSignal): Promise<void> {
    const zip = new ZipWriter(out, { signal });
    for (const it of plan.items) {
      const mtime = it.entry.mtime || Date.now();
      if (it.entry.type === 'dir') {
        await zip.addDir(it.name, mtime);
        continue;
      }
      await zip.addFile(it.name, await fa.read(it.place, undefined, signal), { size: it.entry.size, mtime, compress: false });
    }
    await zip.finish();
  }
}

/** `name`, or `name (2)`, `name (3)`… when an earlier item of the archive already uses it. */
function unique(name: string, taken: Set<string>): string {
  let n = name;
  for (let i = 2; taken.has(n); i++) {
    const dot = name.lastIndexOf('.');
    n = dot > 0 ? `${name.slice(0, dot)} (${i})${name.slice(dot)}` : `${name} (${i})`;
  }
  taken.add(n);
  return n;
}

/**
 * The name of the deepest folder holding every target (the storage's name at
 * its root), so a selection in `Photos` downloads as `Photos.zip`; null when
 * the targets are on different storages.
 */
function sharedFolderName(targets: Array<{ storage: { id: number; name: string }; rel: string }>): string | null {
  if (targets.some((t) => t.storage.id !== targets[0].storage.id)) return null;
  let common = parentRel(targets[0].rel).split('/').filter(Boolean);
  for (const t of targets) {
    const parts = parentRel(t.rel).split('/').filter(Boolean);
    let i = 0;
    while (i < common.length && i < parts.length && common[i] === parts[i]) i++;
    common = common.slice(0, i);
  }
  return common.length ? common[common.length - 1] : targets[0].storage.name;
}
