/** Small driver helpers the protection features share. */
import { createHash } from 'node:crypto';
import { randomBytes } from 'node:crypto';
import type { Entry, StorageDriver } from '../storage';
import { isAppError } from '../errors';
import { joinRel } from '../lib/paths';

/** Every item below folder `rel` (not `rel` itself), paths relative to the storage root; parents before children. */
export async function subtree(d: StorageDriver, rel: string): Promise<Array<{ path: string; entry: Entry }>> {
  const out: Array<{ path: string; entry: Entry }> = [];
  if (d.walk) {
    for await (const e of d.walk(rel)) if (e.path !== '') out.push({ path: joinRel(rel, e.path), entry: e });
    return out.sort((a, b) => a.path.split('/').length - b.path.split('/').length);
  }
  const queue = [rel];
  while (queue.length) {
    const dir = queue.shift()!;
    for await (const e of d.list(dir)) {
      const path = joinRel(dir, e.name);
      out.push({ path, entry: e });
      if (e.type === 'dir') queue.push(path);
    }
  }
  return out;
}

/** The entry at `rel`, or null when it does not exist (other errors propagate). */
export async function statOrNull(d: StorageDriver, rel: string): Promise<Entry | null> {
  try {
    return await d.stat(rel);
  } catch (e) {
    if (isAppError(e) && e.code === 'not_found') return null;
    throw e;
  }
}

/** Hex sha256 of a file's bytes, streamed. */
export async function sha256Of(d: StorageDriver, rel: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of await d.read(rel)) h.update(chunk as Buffer);
  return h.digest('hex');
}

/** A sortable, collision-free folder name for one trash slot or snapshot: `20261121T101500123Z-1a2b3c`. */
export const slotName = (at = new Date()): string => `${at.toISOString().replace(/[-:.]/g, '')}-${randomBytes(3).toString('hex')}`;
