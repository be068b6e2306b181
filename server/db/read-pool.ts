/**
 * SQLite reads off the event loop (`db.async.aside`): statements heavy enough to hold the main thread (a
 * content search's common word: ~3,000 hits looked up and sorted, ~10 ms; docs/fulltext.md) run on reader
 * threads, each with its own read-only connection to the file (sqlite-read.worker.ts). WAL lets them read
 * beside the service's one writing connection, and a second core works while the event loop serves the rest.
 *
 * - Threads start on first use, up to `size`, one more only when every one is busy; a statement waits for a
 *   free thread in arrival order. Each thread runs one statement at a time.
 * - A thread that dies fails only the statement it ran, with an error that says so; the next statement
 *   starts a new thread. (No heap bound: V8 ends the whole process, not the thread, when better-sqlite3
 *   passes it while building rows; measured.)
 * - An idle thread keeps no process alive; a busy one does, until its answer comes.
 */
import type { Worker } from 'node:worker_threads';
import { startWorker } from '../lib/worker';

/** A statement for a reader thread: SQL text with `?` (an array) or `@name` (an object) parameters. */
interface ReadJob {
  text: string;
  params: unknown[] | Record<string, unknown>;
  raw: boolean;
  resolve(rows: unknown[]): void;
  reject(e: Error): void;
}

export interface Reader {
  worker: Worker;
  job: (ReadJob & { id: number }) | null;
}

export interface ReadPoolOptions {
  /** How many reader threads at most. */
  size: number;
  /** Each connection's page cache (KiB). */
  cacheKib: number;
}

export class ReadPool {
  private readers: Reader[] = [];
  private waiting: ReadJob[] = [];
  private seq = 0;
  private closed = false;

  constructor(
    private file: string,
    private o: ReadPoolOptions,
  ) {}

  /** The rows of a read-only statement (a statement that writes is refused); rejects with SQLite's error, or when the thread died under it. */
  sql<R>(text: string, params: unknown[] | Record<string, unknown>, raw: boolean): Promise<R[]> {
    if (this.closed) return Promise.reject(new Error('the database is closed'));
    return new Promise<R[]>((resolve, reject) => {
      this.waiting.push({ text, params, raw, resolve: resolve as (rows: unknown[]) => void, reject });
      this.dispatch();
    });
  }

  /** Stops every thread; statements still waiting or running fail. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    const gone = new Error('the database is closed');
    for (const job of this.waiting.splice(0)) job.reject(gone);
    const readers = this.readers.splice(0);
    for (const r of readers) r.job?.reject(gone);
    await Promise.all(readers.map((r) => r.worker.terminate()));
  }

  private dispatch(): void {
    while (this.waiting.length) {
      const free = this.readers.find((r) => !r.job) ?? (this.readers.length < this.o.size ? this.start() : undefined);
      if (!free) return;
      const job = { ...this.waiting.shift()!, id: ++this.seq };
      try {
        free.worker.postMessage({ id: job.id, text: job.text, params: job.params, raw: job.raw });
      } catch (e) {
        job.reject(e as Error); // parameters that cannot be copied to the thread
        continue;
      }
      free.job = job;
      free.worker.ref();
    }
  }

  /** A new thread, taking statements at once (its connection opens before the first message is read). */
  protected start(): Reader {
    const worker = startWorker(new URL('./sqlite-read.worker.ts', import.meta.url), {
      workerData: { file: this.file, cacheKib: this.o.cacheKib },
    });
    const reader: Reader = { worker, job: null };
    worker.unref();
    worker.on('message', (m: { id: number; rows?: unknown[]; error?: { message: string; code?: string } }) => {
      const job = reader.job;
      if (!job || job.id !== m.id) return;
      reader.job = null;
      worker.unref();
      if (m.error) job.reject(Object.assign(new Error(m.error.message), m.error.code ? { code: m.error.code } : {}));
      else job.resolve(m.rows!);
      this.dispatch();
    });
    // 'error' comes before 'exit' when the thread failed (the file would not open, an exception): keep its reason.
    let reason = '';
    worker.on('error', (e: Error & { code?: string }) => (reason = e.code ?? e.message));
    worker.on('exit', (code) => {
      const at = this.readers.indexOf(reader);
      if (at < 0) return; // closed
      this.readers.splice(at, 1);
      reader.job?.reject(new Error(`the database reader thread stopped (${reason || `exit code ${code}`}) while it ran a statement`));
      this.dispatch();
    });
    this.readers.push(reader);
    return reader;
  }
}
