/**
 * Open files for READ. NFS has no open or close, and a sequential client
 * sends one READ after another (libnfs's `nfs-cp`: one 1 MiB READ at a
 * time), so what a READ costs besides its bytes is the copy's speed. The
 * file opened through the tree (`GatewayTree.open`: containment walk, stat)
 * is kept and reused by the next READs of the same place for FRESH_MS
 * (then opened through the tree again: a file replaced or changed through
 * another door is seen within that time, as a client's attribute cache
 * would; access is still checked on every call by the caller); a stage
 * published over the place forgets it at once. Kept IDLE_MS after its
 * last READ, MAX_OPEN at most.
 *
 * A file on a local disk is read positionally into a pooled buffer (given
 * back once the reply is sent) with the callback `fs.read` (the FileHandle
 * machinery cost more than the read itself here). While one READ is alone
 * on its file, the spans after it are read ahead, so the next sequential
 * READs find their bytes ready. They are started before this READ's reply
 * is written: started after it (to keep the thread pool's submission off
 * the reply's path), `nfs-cp` copied slower side by side on the loaded
 * machine. Other storages go through the SFTP gateway's read handle (one
 * sequential stream, reopened on a seek).
 */
import { close } from 'node:fs';
import type { OpenFile } from '../../files';
import { openRead, readAt } from '../../lib/send-range';
import { ReadHandle } from '../sftp/handles';
import type { BufferPool } from './pool';

const IDLE_MS = 10_000;
const FRESH_MS = 1000;
const MAX_OPEN = 64;
/**
 * Spans read ahead of a sequential client. On the loaded 2-core machine the
 * thread pool's reads wait for a core too: counted with the reads started
 * after the reply, one span ahead left a fifth of the READs waiting for
 * theirs (0.1–0.4 ms a READ on average), two 3–10 %, four 0–2 in 1,000.
 */
const AHEAD = 4;
/** Spans read ahead for all files together (each holds a pooled 1 MiB buffer). */
const AHEAD_TOTAL = 32;

interface Span {
  offset: number;
  len: number;
  data: Promise<Buffer | null>;
}

interface Open {
  file: OpenFile;
  /** When the tree last opened it. */
  checked: number;
  /** The local file's descriptor; null for other storages. */
  fd: Promise<number | null>;
  stream: ReadHandle;
  timer: NodeJS.Timeout;
  /** READs of it running now. */
  active: number;
  /** Reads ahead not finished yet (the descriptor is closed only after them). */
  reading: number;
  /** Spans being read or read for the next READs, in order. */
  ahead: Span[];
}

/** Where a file is (storage id, path in it). */
export interface ReadPlace {
  storageId: number;
  rel: string;
}

const keyOf = (p: ReadPlace) => `${p.storageId}\0${p.rel}`;

export class OpenReads {
  private open = new Map<string, Open>();
  /** Spans in every file's `ahead` now. */
  private spans = 0;

  /** `pool`: buffers of at least the largest READ. */
  constructor(private pool: BufferPool) {}

  /**
   * Up to `len` bytes (at most the pool's buffer size) at `offset` of the
   * file at `place`, and its size; `openFile` opens it through the tree
   * when what is kept is older than FRESH_MS.
   */
  async read(place: ReadPlace, openFile: () => Promise<OpenFile>, offset: number, len: number): Promise<{ data: Buffer; size: number }> {
    const key = keyOf(place);
    const hit = await this.current(key, openFile);
    hit.timer.refresh();
    const size = hit.file.size;
    hit.active++;
    try {
      const fd = await hit.fd;
      if (fd === null) return { data: await hit.stream.read(offset, len), size };
      len = Math.max(0, Math.min(len, size - offset));
      if (len === 0) return { data: Buffer.alloc(0), size };
      const span = hit.ahead[0]?.offset === offset && hit.ahead[0].len >= len ? hit.ahead.shift() : undefined;
      if (span) this.spans--;
      // Not where the client reads: what was read ahead is given back.
      else this.giveBack(hit.ahead.splice(0));
      let data = span ? await span.data : null;
      data ??= await this.pread(fd, offset, len);
      const next = offset + len;
      if (hit.active === 1 && next < size) this.readAhead(key, hit, fd, next, len);
      return { data: data.subarray(0, len), size };
    } finally {
      hit.active--;
    }
  }

  /** Forgets what is kept of `place` (its stage was published: the next READ opens the new file). */
  forget(place: ReadPlace): void {
    this.drop(keyOf(place));
  }

  /**
   * Reads up to AHEAD spans of `len` bytes from `offset` on for the next
   * READs (those already under way are kept), unless the file was dropped
   * meanwhile.
   */
  private readAhead(key: string, hit: Open, fd: number, offset: number, len: number): void {
    if (this.open.get(key) !== hit) return;
    if (hit.ahead.length > 0 && hit.ahead[0].offset !== offset) this.giveBack(hit.ahead.splice(0));
    const size = hit.file.size;
    let at = hit.ahead.length > 0 ? hit.ahead[hit.ahead.length - 1].offset + hit.ahead[hit.ahead.length - 1].len : offset;
    while (hit.ahead.length < AHEAD && this.spans < AHEAD_TOTAL && at < size) {
      const n = Math.min(len, size - at);
      hit.reading++;
      const data = this.pread(fd, at, n)
        .catch(() => null)
        .finally(() => hit.reading--);
      hit.ahead.push({ offset: at, len: n, data });
      this.spans++;
      at += n;
    }
  }

  /** Gives the buffers of spans no READ will take back to the pool once they are read. */
  private giveBack(spans: Span[]): void {
    this.spans -= spans.length;
    for (const s of spans) void s.data.then((b) => b && this.pool.give(b));
  }

  /** The kept open file at `key`, opened again through the tree when older than FRESH_MS (a changed one is replaced). */
  private async current(key: string, openFile: () => Promise<OpenFile>): Promise<Open> {
    const kept = this.open.get(key);
    if (kept && Date.now() - kept.checked < FRESH_MS) return kept;
    const file = await openFile();
    // Another READ may have opened it meanwhile.
    const hit = this.open.get(key);
    if (hit && hit.file.size === file.size && hit.file.mtime === file.mtime) {
      hit.checked = Date.now();
      return hit;
    }
    if (hit) this.drop(key);
    if (this.open.size >= MAX_OPEN) this.drop(this.open.keys().next().value!);
    const made: Open = {
      file,
      checked: Date.now(),
      fd: file.localFile().then((p) => (p ? openRead(p) : null)),
      stream: new ReadHandle(file),
      timer: setTimeout(() => this.open.get(key) === made && this.drop(key), IDLE_MS).unref(),
      active: 0,
      reading: 0,
      ahead: [],
    };
    // A failed open is answered to its READ; the next READ tries again.
    made.fd.catch(() => this.open.get(key) === made && this.drop(key));
    this.open.set(key, made);
    return made;
  }

  private async pread(fd: number, offset: number, len: number): Promise<Buffer> {
    const buffer = this.pool.take();
    try {
      return buffer.subarray(0, await readAt(fd, buffer, len, offset));
    } catch (e) {
      this.pool.give(buffer);
      throw e;
    }
  }

  private drop(key: string): void {
    const hit = this.open.get(key);
    if (!hit) return;
    clearTimeout(hit.timer);
    this.open.delete(key);
    this.giveBack(hit.ahead.splice(0));
    void hit.stream.close();
    // Closed once the READs running on it (and its reads ahead) are done with it.
    void hit.fd
      .then(async (fd) => {
        while (hit.active > 0 || hit.reading > 0) await new Promise((r) => setTimeout(r, 10));
        if (fd !== null) close(fd, () => undefined);
      })
      .catch(() => undefined);
  }

  /** Closes every open file. */
  close(): void {
    for (const key of [...this.open.keys()]) this.drop(key);
  }
}
