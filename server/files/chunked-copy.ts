/**
 * A large file copied to another storage in parts that survive a crash. The
 * target's multipart capability stages the parts where nothing is visible
 * (local: one sparse file in the data dir, each part written at its offset
 * and fdatasync'ed; S3: a multipart upload), and the op's journal records
 * the session and every committed part's etag. A resumed attempt reopens
 * the same session and reads the source from the first part not recorded,
 * so it never starts again from byte 0; `complete` publishes atomically.
 *
 * A part is journalled only after the driver returned its etag, i.e. after
 * the bytes are durable on the target: the journal can lag the staged data
 * (a part is written twice after a crash) but never lead it. The source's
 * size, mtime and etag are recorded too: a source that changed meanwhile
 * starts the file over instead of mixing two versions.
 */
import { isBusy } from '../db';
import { isAppError } from '../errors';
import type { OpJournal } from '../jobs';
import type { Entry, MultipartCapability } from '../storage';
import type { Place } from './access';
import type { StorageOps } from './storage-ops';

/** Bytes per committed part: one fdatasync and one journal row each. */
export const CHUNK_BYTES = 64 * 1024 * 1024;
/** S3 takes at most 10,000 parts: larger files get larger parts. */
const MAX_PARTS = 10_000;

/** What the journal holds for a file being copied in parts (key `c:<rel>`). */
interface ChunkState {
  handle: string;
  part_size: number;
  /** The source as it was when the session opened. */
  source: { size: number; mtime: number; etag: string | null };
  /** Etags of parts 1..n, committed in order. */
  etags: string[];
}

export interface ChunkedCopy {
  from: Place;
  to: Place;
  source: Entry;
  journal: OpJournal;
  /** Journal key of this file's state. */
  key: string;
  signal: AbortSignal;
  /** Bytes of this file committed on the target so far; `resumedAt` is set on the first call of a resumed copy. */
  onCommitted(bytes: number, resumedAt?: number): void;
}

/** Whether a file of `size` bytes goes this way: the target can stage parts and the file spans more than one. */
export async function chunkable(ops: StorageOps, to: Place, size: number): Promise<MultipartCapability | null> {
  if (size <= CHUNK_BYTES) return null;
  return ops.multipart(to.storage_id);
}

const partSizeFor = (size: number): number => Math.max(CHUNK_BYTES, Math.ceil(size / MAX_PARTS / (1024 * 1024)) * 1024 * 1024);

/**
 * Copies one file through `mp`, resuming a session the journal holds. On an
 * error the session is kept (the caller decides: `abandon` when the op ends
 * for good, nothing when the server is only stopping).
 */
export async function copyInParts(ops: StorageOps, mp: MultipartCapability, c: ChunkedCopy): Promise<Entry> {
  const size = c.source.size;
  let state = readState(await c.journal.get(c.key));
  const same = state && state.source.size === size && state.source.mtime === c.source.mtime && state.source.etag === (c.source.etag ?? null);
  if (state && !same) {
    await mp.abort(state.handle).catch(() => undefined);
    state = null;
  }
  if (!state) {
    const part_size = partSizeFor(size);
    const { handle } = await mp.init(c.to.rel, { size, partSize: part_size, mime: c.source.mime });
    state = { handle, part_size, source: { size, mtime: c.source.mtime, etag: c.source.etag ?? null }, etags: [] };
    try {
      await c.journal.put(c.key, JSON.stringify(state));
    } catch (e) {
      // Unrecorded, the session would be nobody's to discard.
      await mp.abort(handle).catch(() => undefined);
      throw e;
    }
  }
  const parts = Math.ceil(size / state.part_size);
  const resumedAt = Math.min(size, state.etags.length * state.part_size);
  c.onCommitted(resumedAt, state.etags.length ? resumedAt : undefined);
  for (let part = state.etags.length + 1; part <= parts; part++) {
    c.signal.throwIfAborted();
    const start = (part - 1) * state.part_size;
    const end = Math.min(size, start + state.part_size) - 1;
    const body = await ops.read(c.from, { start, end }, c.signal);
    const { etag } = await mp.putPart(state.handle, part, body, end - start + 1, c.signal);
    state.etags.push(etag);
    await record(c, state);
    c.onCommitted(end + 1);
  }
  try {
    return await mp.complete(
      state.handle,
      state.etags.map((etag, i) => ({ part: i + 1, etag })),
    );
  } catch (e) {
    // A crash between publishing and the caller's record: the session is gone and the whole file is in place.
    if (isAppError(e) && e.code === 'not_found') {
      const at = await ops.statOrNull(c.to);
      if (at?.type === 'file' && at.size === size) return at;
    }
    throw e;
  }
}

/**
 * Journals the committed parts. A database held by another program skips the
 * write rather than failing a copy: the journal may lag the staging (a crash
 * then writes those parts again), and the next part's record catches up.
 */
async function record(c: ChunkedCopy, state: ChunkState): Promise<void> {
  try {
    await c.journal.put(c.key, JSON.stringify(state));
  } catch (e) {
    if (!isBusy(e)) throw e;
  }
}

/** Discards the staged parts of a file the journal holds (the op failed or was cancelled). Best effort. */
export async function abandonParts(mp: MultipartCapability | null, journal: OpJournal, key: string): Promise<void> {
  const state = readState(await journal.get(key));
  if (mp && state) await mp.abort(state.handle).catch(() => undefined);
}

/** The journal's value, checked like input (it comes back from the database). */
function readState(raw: string | undefined): ChunkState | null {
  if (!raw) return null;
  try {
    const s = JSON.parse(raw) as ChunkState;
    if (
      typeof s.handle === 'string' &&
      Number.isSafeInteger(s.part_size) &&
      s.part_size > 0 &&
      Array.isArray(s.etags) &&
      s.etags.every((e) => typeof e === 'string') &&
      s.source &&
      typeof s.source === 'object'
    )
      return s;
  } catch {
    // a damaged record: start the file over
  }
  return null;
}
