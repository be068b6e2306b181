/**
 * "Download as ZIP" from the file manager: files and folders the caller may
 * read, streamed as one archive of stored entries (like share ZIPs), never
 * buffered. Everything that can refuse the download (access per path, the
 * path count, the size budget, a missing path) is checked while planning,
 * before the first byte; hidden service folders are left out.
 *
 * Storage access goes through the two functions of `ZipSource`, so it can move
 * onto the file service without touching the rest.
 */
import type { Readable, Writable } from 'node:stream';
import type { Principal } from '../auth';
import type { Catalogue } from '../catalogue';
import type { Entry, StorageDriver } from '../storage';
import { AppError } from '../errors';
import { baseName, isInternalName, joinRel } from '../lib/paths';
import { ZipWriter } from './zip-writer';
import { MAX_PATHS } from './archives.service';

/** One entry of the archive to write. */
interface PlanItem {
  driver: StorageDriver;
  rel: string;
  /** Name inside the archive (folders end without a slash; the writer adds it). */
  name: string;
  entry: Entry;
}

export interface ZipPlan {
  /** `<folder or file>.zip` for one item, `files.zip` for several. */
  filename: string;
  items: PlanItem[];
  /** Sum of the files' sizes. */
  bytes: number;
}

/** Where the bytes come from: a readable place for a UI path, and the driver of a storage. */
export interface ZipSource {
  resolve(p: Principal, uiPath: string): { storageId: number; rel: string; storageName: string };
  driverFor(storageId: number): Promise<StorageDriver>;
}

/** The catalogue as a ZipSource (viewer access, the same resolve the other file routes use). */
export function catalogueZipSource(cat: Catalogue): ZipSource {
  return {
    resolve(p, uiPath) {
      const r = cat.resolve(p, uiPath, 'viewer');
      return { storageId: r.storage.id, rel: r.rel, storageName: r.storage.name };
    },
    driverFor: (id) => cat.driverFor(id),
  };
}

export class DownloadZip {
  /** `maxBytes`: `limits.max_archive_bytes` (0 = no limit). */
  constructor(private src: ZipSource, private maxBytes: number) {}

  /**
   * Checks every path and lists what the archive will hold. Throws
   * `too_many_paths` (over 500), `bad_path` (empty list), `not_found` /
   * `forbidden` per path as the other file routes do, and
   * `archive_too_large` when the files add up to more than the limit.
   */
  async plan(p: Principal, paths: string[], signal?: AbortSignal): Promise<ZipPlan> {
    if (paths.length === 0) throw new AppError('bad_path', {}, { field: 'path', reason: 'at least one path is required' });
    if (paths.length > MAX_PATHS) throw new AppError('too_many_paths', { max: MAX_PATHS }, { max: MAX_PATHS });
    const places = paths.map((path) => this.src.resolve(p, path));
    const items: PlanItem[] = [];
    const taken = new Set<string>();
    let bytes = 0;
    for (const place of places) {
      const driver = await this.src.driverFor(place.storageId);
      const top = unique(place.rel ? baseName(place.rel) : place.storageName, taken);
      for await (const item of walk(driver, place.rel, top, signal)) {
        items.push({ driver, ...item });
        if (item.entry.type === 'file') bytes += item.entry.size;
        if (this.maxBytes > 0 && bytes > this.maxBytes) throw new AppError('archive_too_large', { max: this.maxBytes }, { max: this.maxBytes });
      }
    }
    const filename = places.length === 1 ? `${items[0].name}.zip` : 'files.zip';
    return { filename, items, bytes };
  }

  /**
   * Writes the planned archive into `out` (stored entries); the writer ends `out`.
   * Rejects when a read fails or `signal` aborts; the caller destroys `out` then.
   */
  async write(plan: ZipPlan, out: Writable, signal?: AbortSignal): Promise<void> {
    const zip = new ZipWriter(out, { signal });
    for (const it of plan.items) {
      const mtime = it.entry.mtime || Date.now();
      if (it.entry.type === 'dir') {
        await zip.addDir(it.name, mtime);
        continue;
      }
      const body: Readable = await it.driver.read(it.rel, undefined, signal);
      await zip.addFile(it.name, body, { size: it.entry.size, mtime, compress: false });
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

/** The item and, for a folder, everything below it except service folders, named under `top`. */
async function* walk(driver: StorageDriver, rel: string, top: string, signal?: AbortSignal): AsyncIterable<Omit<PlanItem, 'driver'>> {
  const first = await driver.stat(rel);
  yield { rel, name: top, entry: first };
  if (first.type !== 'dir') return;
  const stack: Array<{ rel: string; name: string }> = [{ rel, name: top }];
  while (stack.length) {
    const dir = stack.pop()!;
    for await (const e of driver.list(dir.rel)) {
      if (signal?.aborted) throw signal.reason;
      if (isInternalName(e.name)) continue;
      const child = { rel: joinRel(dir.rel, e.name), name: `${dir.name}/${e.name}` };
      yield { ...child, entry: e };
      if (e.type === 'dir') stack.push(child);
    }
  }
}
