import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../api/client';
import type { UploadStatus } from '../api/types';
import { UploadQueue, partCount, backoffMs, type Transport, type FileLike, type PendingStore, type PendingRecord, type Timers } from './upload-queue';

const CHUNK = 1024;
const net = () => new ApiError(0, { error: 'network', message: '' }, null);

/** An in-memory server speaking the upload protocol, with failure injection. */
class FakeServer implements Transport {
  sessions = new Map<string, { path: string; size: number; parts: Map<number, { etag: string; size: number; bytes: Uint8Array }> }>();
  files = new Map<string, Uint8Array>();
  partCalls: number[] = [];
  /** Parts that fail with a network error once each (simulates a drop mid-upload). */
  dropOnce = new Set<number>();
  aborted: string[] = [];
  refuse: ApiError | null = null;
  hold: Promise<void> | null = null;
  private n = 0;

  async simple(folder: string, file: FileLike, onProgress: (n: number) => void): Promise<void> {
    if (this.refuse) throw this.refuse;
    onProgress(file.size);
    this.files.set(`${folder}/${file.name}`, new Uint8Array(await file.arrayBuffer()));
  }
  async init(req: { path: string; size: number }) {
    const id = `up${++this.n}`;
    this.sessions.set(id, { path: req.path, size: req.size, parts: new Map() });
    return { upload_id: id, presigned_urls: null, expires_at: '', chunk_size: CHUNK };
  }
  async part(id: string, part: number, body: Blob, _url: string | null, onProgress: (n: number) => void, signal: AbortSignal) {
    this.partCalls.push(part);
    if (this.hold) await this.hold;
    if (signal.aborted) throw Object.assign(new Error('aborted'), { name: 'AbortError' });
    if (this.dropOnce.delete(part)) throw net();
    const s = this.sessions.get(id);
    if (!s) throw new ApiError(404, { error: 'not_found', message: 'gone' }, null);
    const bytes = new Uint8Array(await body.arrayBuffer());
    onProgress(bytes.length);
    s.parts.set(part, { etag: `e${part}`, size: bytes.length, bytes });
    return `e${part}`;
  }
  async status(id: string): Promise<UploadStatus> {
    const s = this.sessions.get(id);
    if (!s) throw new ApiError(404, { error: 'not_found', message: 'gone' }, null);
    return {
      upload_id: id,
      path: s.path,
      size: s.size,
      chunk_size: CHUNK,
      expires_at: '',
      parts: [...s.parts].map(([part, p]) => ({ part, size: p.size, etag: p.etag })),
    };
  }
  async finalize(id: string, etags: { part: number; etag: string }[]) {
    const s = this.sessions.get(id)!;
    assert.deepEqual(
      etags.map((e) => e.part),
      [...s.parts.keys()].sort((a, b) => a - b),
    );
    const out = new Uint8Array(s.size);
    for (const { part } of etags) out.set(s.parts.get(part)!.bytes, (part - 1) * CHUNK);
    this.files.set(s.path, out);
    this.sessions.delete(id);
  }
  async abort(id: string) {
    this.aborted.push(id);
    this.sessions.delete(id);
  }
}

/** The parts (1-based, as the server numbers them) that the server's only session lacks. */
function lackingParts(srv: FakeServer, size: number): number[] {
  const held = [...srv.sessions.values()][0].parts;
  const all = Array.from({ length: partCount(size, CHUNK) }, (_, i) => i + 1);
  const out = all.filter((p) => !held.has(p));
  assert.ok(out.length > 0 && out.length < all.length, 'some parts held, some lacking');
  return out;
}

/** The parts sent since `from` calls, in order of part number. */
const sentSince = (srv: FakeServer, from: number) => srv.partCalls.slice(from).sort((a, b) => a - b);

class MemStore implements PendingStore {
  rows = new Map<string, PendingRecord>();
  list() {
    return [...this.rows.values()];
  }
  save(r: PendingRecord) {
    this.rows.set(r.key, r);
  }
  remove(k: string) {
    this.rows.delete(k);
  }
}

/** Timers fired by hand, so backoff never makes a test wait. */
class ManualTimers implements Timers {
  pending: { fn: () => void; ms: number }[] = [];
  setTimeout(fn: () => void, ms: number) {
    const h = { fn, ms };
    this.pending.push(h);
    return h;
  }
  clearTimeout(h: unknown) {
    this.pending = this.pending.filter((p) => p !== h);
  }
  fireAll() {
    const p = this.pending;
    this.pending = [];
    p.forEach((x) => x.fn());
  }
}

function bytes(n: number, seed = 1): File {
  const a = new Uint8Array(n);
  for (let i = 0; i < n; i++) a[i] = (i * 31 + seed) & 0xff;
  return new File([a], `f${n}.bin`, { type: 'application/octet-stream', lastModified: 1 });
}

/** Resolves once the queue reports `pred` true (bounded, so a broken queue fails instead of hanging). */
async function until(q: UploadQueue, pred: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !pred(); i++) await new Promise((r) => setImmediate(r));
  assert.ok(pred(), `condition not reached: ${JSON.stringify(q.list())}`);
}

describe('upload queue', () => {
  test('part count and backoff', () => {
    assert.equal(partCount(0, CHUNK), 1);
    assert.equal(partCount(CHUNK, CHUNK), 1);
    assert.equal(partCount(CHUNK + 1, CHUNK), 2);
    assert.deepEqual([1, 2, 3, 10].map(backoffMs), [1000, 2000, 4000, 30000]);
  });

  test('a small file goes through the single-shot upload', async () => {
    const srv = new FakeServer();
    const q = new UploadQueue(srv, new MemStore(), new ManualTimers(), CHUNK);
    q.add('/docs', bytes(100));
    await until(q, () => q.list()[0].state === 'done');
    assert.equal(srv.files.get('/docs/f100.bin')?.length, 100);
    assert.equal(srv.partCalls.length, 0);
    assert.deepEqual(q.totals(), { sent: 100, total: 100, active: 0 });
  });

  test('a large file is sent in parts, reassembled in order, and its pending record removed', async () => {
    const srv = new FakeServer();
    const store = new MemStore();
    const q = new UploadQueue(srv, store, new ManualTimers(), CHUNK);
    const f = bytes(5_000_123, 7);
    q.add('/docs', f, 'sub/big.bin');
    await until(q, () => q.list()[0].state === 'done');
    const got = srv.files.get('/docs/sub/big.bin')!;
    assert.deepEqual(got, new Uint8Array(await f.arrayBuffer()));
    assert.equal(srv.partCalls.length, partCount(5_000_123, CHUNK));
    assert.equal(store.rows.size, 0);
  });

  test('a network drop waits offline, then resumes from the server part list without resending parts', async () => {
    const srv = new FakeServer();
    const timers = new ManualTimers();
    const q = new UploadQueue(srv, new MemStore(), timers, CHUNK);
    const size = 5_000_000 + 20 * CHUNK;
    const total = partCount(size, CHUNK);
    srv.dropOnce.add(10);
    q.add('/d', bytes(size));
    await until(q, () => q.list()[0].state === 'offline');
    const stored = [...srv.sessions.values()][0].parts.size;
    assert.ok(stored > 0 && stored < total);
    assert.equal(timers.pending.length, 1);
    assert.equal(timers.pending[0].ms, 1000);
    q.online();
    await until(q, () => q.list()[0].state === 'done');
    // Every part reached the server exactly once, plus the one failed attempt.
    assert.equal(srv.partCalls.length, total + 1);
    assert.equal(srv.files.get('/d/' + `f${size}.bin`)?.length, size);
    assert.equal(timers.pending.length, 0);
  });

  test('pause keeps stored parts; resume finishes; cancel aborts the session', async () => {
    const srv = new FakeServer();
    const q = new UploadQueue(srv, new MemStore(), new ManualTimers(), CHUNK);
    let release!: () => void;
    srv.hold = new Promise((r) => (release = r));
    const key = q.add('/d', bytes(5_000_000 + 10 * CHUNK));
    await until(q, () => srv.partCalls.length === 4);
    q.pause(key);
    assert.equal(q.list()[0].state, 'paused');
    srv.hold = null;
    release();
    await new Promise((r) => setImmediate(r));
    assert.equal(q.list()[0].state, 'paused');
    q.resume(key);
    await until(q, () => q.list()[0].state === 'done');

    const key2 = q.add('/d', bytes(6_000_000));
    await until(q, () => srv.sessions.size === 1);
    q.cancel(key2);
    await until(q, () => srv.aborted.length === 1);
    assert.equal(q.list()[1].state, 'cancelled');
    assert.equal(srv.sessions.size, 0);
  });

  test('a refusal ends in error with the server message, and is not retried', async () => {
    const srv = new FakeServer();
    const timers = new ManualTimers();
    srv.refuse = new ApiError(403, { error: 'read_only', message: 'This storage is read-only.' }, null);
    const q = new UploadQueue(srv, new MemStore(), timers, CHUNK);
    q.add('/ro', bytes(10));
    await until(q, () => q.list()[0].state === 'error');
    assert.equal(q.list()[0].error, 'This storage is read-only.');
    assert.equal(timers.pending.length, 0);
  });

  test('after a reload the upload waits for its file, refuses a different one, and resumes with the same one', async () => {
    const srv = new FakeServer();
    const store = new MemStore();
    const size = 5_000_000 + 5 * CHUNK;
    const f = bytes(size, 3);
    const first = new UploadQueue(srv, store, new ManualTimers(), CHUNK);
    srv.dropOnce.add(3);
    first.add('/d', f);
    await until(first, () => first.list()[0].state === 'offline');
    assert.equal(store.rows.size, 1);
    const sentBefore = srv.partCalls.length;
    const lacking = lackingParts(srv, size);

    const second = new UploadQueue(srv, store, new ManualTimers(), CHUNK);
    const [row] = second.list();
    assert.equal(row.state, 'needs_file');
    assert.equal(second.attach(row.key, bytes(size - 1)), false);
    assert.equal(second.attach(row.key, f), true);
    await until(second, () => second.list()[0].state === 'done');
    assert.deepEqual(srv.files.get(`/d/f${size}.bin`), new Uint8Array(await f.arrayBuffer()));
    // Exactly the parts the server did not hold were sent again, each once.
    assert.deepEqual(sentSince(srv, sentBefore), lacking);
    assert.equal(store.rows.size, 0);
  });

  test('an expired session restarts from scratch', async () => {
    const srv = new FakeServer();
    const store = new MemStore();
    const size = 5_000_000 + CHUNK;
    const f = bytes(size);
    store.save({ key: 'old', upload_id: 'vanished', path: `/d/${f.name}`, name: f.name, size, last_modified: 1 });
    const q = new UploadQueue(srv, store, new ManualTimers(), CHUNK);
    assert.ok(q.attach('old', f));
    await until(q, () => q.list()[0].state === 'done');
    assert.equal(srv.files.get(`/d/${f.name}`)?.length, size);
  });

  test('a byte source (ciphertext) is sent in its place: same ranges after a drop, its label shown, no record kept', async () => {
    const srv = new FakeServer();
    const store = new MemStore();
    const timers = new ManualTimers();
    const q = new UploadQueue(srv, store, timers, CHUNK);
    const plain = bytes(5_000_000 + 3 * CHUNK, 3);
    // A stand-in for encryptBlob: a longer stream whose every range is computed on demand.
    const size = plain.size + 94;
    const at = (n: number) => (n * 7 + 5) & 0xff;
    const slices: string[] = [];
    const source = {
      size,
      label: 'secret plan.txt',
      async slice(start: number, end: number) {
        slices.push(`${start}-${end}`);
        return new Blob([Uint8Array.from({ length: end - start }, (_, k) => at(start + k))]);
      },
    };
    srv.dropOnce.add(4);
    q.add('/vault', plain, 'abcdefghijklmnopqrstuvwxyz234567abcd', source);
    assert.equal(q.list()[0].name, 'secret plan.txt');
    assert.equal(q.list()[0].size, size);
    await until(q, () => q.list()[0].state === 'offline');
    q.online();
    await until(q, () => q.list()[0].state === 'done');
    const got = srv.files.get('/vault/abcdefghijklmnopqrstuvwxyz234567abcd')!;
    assert.equal(got.length, size);
    assert.ok(
      got.every((b, n) => b === at(n)),
      'the source bytes, not the file, reached the server',
    );
    assert.equal(new Set(slices).size, partCount(size, CHUNK), 'each range asked again only for the dropped part');
    assert.equal(store.rows.size, 0);
    assert.equal(store.list().length, 0);
  });

  test('a source that can be rebuilt keeps a record without the plaintext; after a reload it resumes only with a source', async () => {
    const srv = new FakeServer();
    const store = new MemStore();
    const plain = bytes(5_000_000 + 3 * CHUNK, 5);
    const size = plain.size + 94;
    const at = (n: number) => (n * 13 + 1) & 0xff;
    const vault = { folder_id: 7, header: 'RkRWMQ' };
    const source = () => ({
      size,
      label: 'plan.txt',
      vault,
      slice: async (s: number, e: number) => new Blob([Uint8Array.from({ length: e - s }, (_, k) => at(s + k))]),
    });
    const stored = 'abcdefghijklmnopqrstuvwxyz234567abcd';
    const first = new UploadQueue(srv, store, new ManualTimers(), CHUNK);
    srv.dropOnce.add(3);
    first.add('/vault', plain, stored, source());
    await until(first, () => first.list()[0].state === 'offline');
    const [rec] = store.list();
    assert.deepEqual(
      { path: rec.path, name: rec.name, size: rec.size, last_modified: rec.last_modified, vault: rec.vault },
      { path: `/vault/${stored}`, name: stored, size, last_modified: 0, vault },
    );
    assert.ok(!JSON.stringify(rec).includes('plan.txt'), 'no plaintext name in the record');
    const sentBefore = srv.partCalls.length;
    const lacking = lackingParts(srv, size);

    const second = new UploadQueue(srv, store, new ManualTimers(), CHUNK);
    const [row] = second.list();
    assert.equal(row.state, 'needs_file');
    assert.deepEqual(row.vault, vault);
    assert.equal(second.attach(row.key, plain), false, 'not without its source');
    assert.equal(second.attach(row.key, plain, { ...source(), size: size + 1 }), false, 'not with another size');
    assert.equal(second.attach(row.key, plain, source()), true);
    assert.equal(second.list()[0].name, 'plan.txt');
    assert.equal(second.list()[0].vault, null);
    await until(second, () => second.list()[0].state === 'done');
    const got = srv.files.get(`/vault/${stored}`)!;
    assert.ok(got.length === size && got.every((b, n) => b === at(n)));
    assert.deepEqual(sentSince(srv, sentBefore), lacking);
    assert.equal(store.rows.size, 0);
  });

  test('a plain upload restored after a reload refuses a byte source', async () => {
    const store = new MemStore();
    const f = bytes(5_000_000 + CHUNK);
    store.save({ key: 'old', upload_id: 'up1', path: `/d/${f.name}`, name: f.name, size: f.size, last_modified: 1 });
    const q = new UploadQueue(new FakeServer(), store, new ManualTimers(), CHUNK);
    assert.equal(q.list()[0].vault, null);
    assert.equal(q.attach('old', f, { size: f.size, label: 'x', slice: async () => new Blob([]) }), false);
  });

  test('a small byte source goes in one request under its stored name', async () => {
    const srv = new FakeServer();
    const q = new UploadQueue(srv, new MemStore(), new ManualTimers(), CHUNK);
    const source = { size: 4096, label: 'a.txt', slice: async (s: number, e: number) => new Blob([new Uint8Array(e - s).fill(9)]) };
    q.add('/vault', bytes(10), 'stored2name', source);
    await until(q, () => q.list()[0].state === 'done');
    assert.deepEqual(srv.files.get('/vault/stored2name'), new Uint8Array(4096).fill(9));
  });
});
