/**
 * The one driver conformance suite. Every storage driver runs it against a
 * real backend (a real server on loopback, a temp dir for `local`):
 *
 *   driverConformance('local', async () => ({ driver, teardown }), { bigFileBytes: 2.5 * GiB });
 *
 * Each case works in its own sub-folder of the storage root, so cases never
 * see each other's files. A documented backend limitation is passed as
 * `skip: { '<case name>': '<reason>' }`; the case names are the strings given
 * to `test()` below and are listed in docs/storage-drivers.md.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createCipheriv, createHash } from 'node:crypto';
import { isAppError, type ErrorCode } from '../../server/errors';
import type { Entry, StorageDriver } from '../../server/storage';

export interface ConformanceTarget {
  driver: StorageDriver;
  teardown(): Promise<void>;
}
export interface ConformanceOptions {
  bigFileBytes?: number; // size of the streamed big-file case; default 64 MiB
  ranges?: boolean; // driver honours byte ranges in read(); default true
  mtimePrecisionMs?: number; // backend mtime granularity; default 2000
  skip?: Record<string, string>; // case name -> reason, for a documented backend limitation
}

const MiB = 1024 * 1024;
const CASE_TIMEOUT_MS = 60_000;
/** Names that break naive URL, shell or path handling. */
const SPECIAL_NAMES = ['with space.txt', 'çğüşöı 日本.txt', 'hash#1.txt', 'pct%20.txt', 'what?.txt'];
const SPECIAL_DIR = 'dir #%? ü 日本';

/** Registers the suite as `describe(name)`; `setup` runs once before the cases, `teardown` once after. */
export function driverConformance(name: string, setup: () => Promise<ConformanceTarget>, opts: ConformanceOptions = {}): void {
  const bigFileBytes = opts.bigFileBytes ?? 64 * MiB;
  const ranges = opts.ranges ?? true;
  const precision = opts.mtimePrecisionMs ?? 2000;

  describe(name, () => {
    let target: ConformanceTarget | undefined;
    const d = (): StorageDriver => {
      if (!target) throw new Error('conformance setup failed');
      return target.driver;
    };
    before(async () => {
      target = await setup();
    });
    after(async () => {
      await target?.teardown();
    });

    /** A case in its own folder `dir` (created before `fn` runs). */
    const kase = (title: string, dir: string, fn: (dir: string, t: { skip(msg: string): void }) => Promise<void>, timeout = CASE_TIMEOUT_MS) =>
      test(title, { skip: opts.skip?.[title] ?? false, timeout }, async (t) => {
        await d().mkdir(dir);
        await fn(dir, t);
      });

    kase('stat root and files', 'c-stat', async (dir) => {
      const root = await d().stat('');
      assert.equal(root.type, 'dir');
      const t0 = Date.now();
      const written = await d().write(`${dir}/a.txt`, body('hello'), { size: 5 });
      const t1 = Date.now();
      assert.equal(written.type, 'file');
      assert.equal(written.size, 5);
      const e = await d().stat(`${dir}/a.txt`);
      assert.deepEqual([e.name, e.type, e.size], ['a.txt', 'file', 5]);
      assertMtime(e, t0, t1, precision);
      const folder = await d().stat(dir);
      assert.deepEqual([folder.name, folder.type, folder.size], [dir, 'dir', 0]);
    });

    kase('list folder', 'c-list', async (dir) => {
      await d().mkdir(`${dir}/sub`);
      await d().write(`${dir}/x.bin`, body('xyz'), { size: 3 });
      await d().write(`${dir}/y.txt`, body('hello world'), { size: 11 });
      const rows = (await listAll(d(), dir)).map((e) => [e.name, e.type, e.type === 'file' ? e.size : 0]);
      assert.deepEqual(rows, [
        ['sub', 'dir', 0],
        ['x.bin', 'file', 3],
        ['y.txt', 'file', 11],
      ]);
      assert.deepEqual(await listAll(d(), `${dir}/sub`), []);
    });

    kase('list missing folder', 'c-list-missing', async (dir) => {
      await expectCode(listAll(d(), `${dir}/nope`), 'not_found');
      await expectCode(listAll(d(), `${dir}/nope/deeper`), 'not_found');
    });

    kase('list of a file', 'c-list-file', async (dir) => {
      await d().write(`${dir}/f.txt`, body('f'), { size: 1 });
      await expectCode(listAll(d(), `${dir}/f.txt`), 'not_found');
    });

    const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
    kase('read whole file', 'c-read', async (dir) => {
      await d().write(`${dir}/r.txt`, body(alphabet), { size: alphabet.length });
      assert.equal((await readAll(d(), `${dir}/r.txt`)).toString(), alphabet);
    });

    kase('read byte ranges', 'c-ranges', async (dir, t) => {
      if (!ranges) return t.skip('driver does not honour byte ranges');
      await d().write(`${dir}/r.txt`, body(alphabet), { size: alphabet.length });
      const at = async (start: number, end?: number) => (await readAll(d(), `${dir}/r.txt`, { start, end })).toString();
      assert.equal(await at(3, 7), 'defgh', 'start-end, both inclusive');
      assert.equal(await at(30), '456789', 'start to the end');
      assert.equal(await at(35, 35), '9', 'last byte alone');
      assert.equal(await at(0, 0), 'a', 'first byte alone');
    });

    kase('write replaces', 'c-overwrite', async (dir) => {
      await d().write(`${dir}/w.txt`, body('old content'), { size: 11 });
      const e = await d().write(`${dir}/w.txt`, body('new'), { size: 3 });
      assert.equal(e.size, 3);
      assert.equal((await readAll(d(), `${dir}/w.txt`)).toString(), 'new');
      assert.deepEqual(await names(d(), dir), ['w.txt']);
    });

    kase('write refuses overwrite when asked', 'c-no-overwrite', async (dir) => {
      await d().write(`${dir}/w.txt`, body('keep'), { size: 4 });
      await expectCode(d().write(`${dir}/w.txt`, body('lost'), { size: 4, overwrite: false }), 'conflict');
      assert.equal((await readAll(d(), `${dir}/w.txt`)).toString(), 'keep');
    });

    kase('failed write keeps old content', 'c-failed-write', async (dir) => {
      await d().write(`${dir}/w.txt`, body('old content'), { size: 11 });
      const failing = failingBody(3, 64 * 1024);
      await assert.rejects(d().write(`${dir}/w.txt`, failing, { size: 10 * 64 * 1024 }));
      assert.equal((await readAll(d(), `${dir}/w.txt`)).toString(), 'old content');
      assert.deepEqual(await names(d(), dir), ['w.txt'], 'no temp entry is visible');
    });

    kase('write into missing parent', 'c-missing-parent', async (dir) => {
      await expectCode(d().write(`${dir}/nope/f.txt`, body('x'), { size: 1 }), 'not_found');
      await expectCode(d().stat(`${dir}/nope`), 'not_found');
    });

    kase('mkdir nested and idempotent', 'c-mkdir', async (dir) => {
      await d().mkdir(`${dir}/a/b/c`);
      assert.equal((await d().stat(`${dir}/a/b/c`)).type, 'dir');
      await d().mkdir(`${dir}/a/b/c`);
      await d().mkdir(`${dir}/a`);
      assert.deepEqual(await names(d(), `${dir}/a`), ['b']);
      assert.deepEqual(await names(d(), `${dir}/a/b/c`), []);
    });

    kase('delete file', 'c-delete-file', async (dir) => {
      await d().write(`${dir}/gone.txt`, body('x'), { size: 1 });
      await d().write(`${dir}/stays.txt`, body('y'), { size: 1 });
      await d().delete(`${dir}/gone.txt`);
      await expectCode(d().stat(`${dir}/gone.txt`), 'not_found');
      assert.deepEqual(await names(d(), dir), ['stays.txt']);
    });

    kase('delete non-empty folder', 'c-delete-dir', async (dir) => {
      await d().mkdir(`${dir}/tree/deep/er`);
      await d().write(`${dir}/tree/a.txt`, body('a'), { size: 1 });
      await d().write(`${dir}/tree/deep/er/b.txt`, body('b'), { size: 1 });
      await d().delete(`${dir}/tree`);
      await expectCode(d().stat(`${dir}/tree`), 'not_found');
      await expectCode(d().stat(`${dir}/tree/deep/er/b.txt`), 'not_found');
      assert.deepEqual(await names(d(), dir), []);
    });

    kase('delete missing', 'c-delete-missing', async (dir) => {
      await expectCode(d().delete(`${dir}/nope.txt`), 'not_found');
      await expectCode(d().delete(`${dir}/nope/deeper`), 'not_found');
    });

    for (const verb of ['move', 'copy'] as const) {
      const keepsSource = verb === 'copy';
      const run = (from: string, to: string, overwrite: boolean) => {
        const fn = d()[verb];
        if (!fn) throw new Error(`no ${verb}`);
        return fn.call(d(), from, to, { overwrite });
      };

      kase(`${verb} file`, `c-${verb}-file`, async (dir, t) => {
        if (!d()[verb]) return t.skip(`driver has no ${verb} capability; callers fall back to read + write`);
        await d().mkdir(`${dir}/to`);
        await d().write(`${dir}/a.txt`, body('payload'), { size: 7 });
        await run(`${dir}/a.txt`, `${dir}/to/b #%.txt`, false);
        assert.equal((await readAll(d(), `${dir}/to/b #%.txt`)).toString(), 'payload');
        if (keepsSource) assert.equal((await readAll(d(), `${dir}/a.txt`)).toString(), 'payload');
        else await expectCode(d().stat(`${dir}/a.txt`), 'not_found');
      });

      kase(`${verb} folder`, `c-${verb}-dir`, async (dir, t) => {
        if (!d()[verb]) return t.skip(`driver has no ${verb} capability; callers fall back to read + write`);
        await d().mkdir(`${dir}/src/inner/empty`);
        await d().write(`${dir}/src/top.txt`, body('top'), { size: 3 });
        await d().write(`${dir}/src/inner/low.txt`, body('low'), { size: 3 });
        await run(`${dir}/src`, `${dir}/dst`, false);
        assert.equal((await readAll(d(), `${dir}/dst/top.txt`)).toString(), 'top');
        assert.equal((await readAll(d(), `${dir}/dst/inner/low.txt`)).toString(), 'low');
        assert.deepEqual(await names(d(), `${dir}/dst/inner`), ['empty', 'low.txt']);
        assert.deepEqual(await names(d(), dir), keepsSource ? ['dst', 'src'] : ['dst']);
      });

      kase(`${verb} onto existing`, `c-${verb}-conflict`, async (dir, t) => {
        if (!d()[verb]) return t.skip(`driver has no ${verb} capability; callers fall back to read + write`);
        await d().write(`${dir}/a.txt`, body('new'), { size: 3 });
        await d().write(`${dir}/b.txt`, body('old'), { size: 3 });
        await expectCode(run(`${dir}/a.txt`, `${dir}/b.txt`, false), 'conflict');
        assert.equal((await readAll(d(), `${dir}/b.txt`)).toString(), 'old');
        assert.equal((await readAll(d(), `${dir}/a.txt`)).toString(), 'new');
        await run(`${dir}/a.txt`, `${dir}/b.txt`, true);
        assert.equal((await readAll(d(), `${dir}/b.txt`)).toString(), 'new');
        assert.deepEqual(await names(d(), dir), keepsSource ? ['a.txt', 'b.txt'] : ['b.txt']);
      });
    }

    kase('special names', 'c-names', async (dir) => {
      await d().mkdir(`${dir}/${SPECIAL_DIR}`);
      for (const n of SPECIAL_NAMES) {
        const p = `${dir}/${SPECIAL_DIR}/${n}`;
        await d().write(p, body(n), { size: Buffer.byteLength(n) });
        const e = await d().stat(p);
        assert.equal(e.name, n);
        assert.equal(e.size, Buffer.byteLength(n));
        assert.equal((await readAll(d(), p)).toString(), n);
      }
      assert.deepEqual(await names(d(), dir), [SPECIAL_DIR]);
      assert.deepEqual(await names(d(), `${dir}/${SPECIAL_DIR}`), [...SPECIAL_NAMES].sort());
      await d().delete(`${dir}/${SPECIAL_DIR}/${SPECIAL_NAMES[2]}`);
      assert.equal((await names(d(), `${dir}/${SPECIAL_DIR}`)).length, SPECIAL_NAMES.length - 1);
      await d().delete(`${dir}/${SPECIAL_DIR}`);
      assert.deepEqual(await names(d(), dir), []);
    });

    kase('empty file', 'c-empty', async (dir) => {
      const e = await d().write(`${dir}/zero`, Readable.from([]), { size: 0 });
      assert.equal(e.size, 0);
      assert.equal((await d().stat(`${dir}/zero`)).size, 0);
      assert.equal((await readAll(d(), `${dir}/zero`)).length, 0);
      assert.deepEqual(
        (await listAll(d(), dir)).map((x) => [x.name, x.type, x.size]),
        [['zero', 'file', 0]],
      );
    });

    kase(
      'big file streamed',
      'c-big',
      async (dir) => {
        const mem = memoryPeak();
        const src = randomBody(bigFileBytes, 'conformance');
        const e = await d().write(`${dir}/big.bin`, src.stream, { size: bigFileBytes });
        assert.equal(e.size, bigFileBytes);
        assert.equal((await d().stat(`${dir}/big.bin`)).size, bigFileBytes);
        const hash = createHash('sha256');
        let read = 0;
        await pipeline(
          await d().read(`${dir}/big.bin`),
          new Writable({
            write(chunk: Buffer, _enc, cb) {
              hash.update(chunk);
              read += chunk.length;
              cb();
            },
          }),
        );
        assert.equal(read, bigFileBytes);
        assert.equal(hash.digest('hex'), src.digest(), 'bytes read back equal bytes written');
        if (ranges && bigFileBytes > 2 * MiB) {
          // A range near the end crosses the 2^31 offset for multi-GiB files.
          const start = bigFileBytes - MiB - 7;
          const tail = await readAll(d(), `${dir}/big.bin`, { start, end: start + 99 });
          assert.equal(tail.length, 100);
          assert.deepEqual(tail, randomSlice('conformance', start, 100));
        }
        const peak = mem.stop();
        // Streaming keeps a bounded number of chunks in flight; a driver that buffers
        // the body grows by the file size. Generous so GC timing never flakes.
        const ceiling = Math.max(160 * MiB, bigFileBytes / 4);
        assert.ok(peak < ceiling, `memory grew by ${Math.round(peak / MiB)} MiB (ceiling ${Math.round(ceiling / MiB)} MiB)`);
        await d().delete(`${dir}/big.bin`);
      },
      Math.max(CASE_TIMEOUT_MS, 60_000 + (bigFileBytes / (20 * MiB)) * 1000),
    );

    kase('missing path', 'c-missing', async (dir) => {
      await expectCode(d().stat(`${dir}/nope.txt`), 'not_found');
      await expectCode(d().read(`${dir}/nope.txt`), 'not_found');
      await expectCode(d().stat(`${dir}/nope/deeper.txt`), 'not_found');
      await expectCode(d().read(`${dir}/nope/deeper.txt`), 'not_found');
    });
  });
}

/** A small in-memory body (test payloads only; big bodies use `randomBody`). */
const body = (text: string | Buffer): Readable => Readable.from([Buffer.from(text)]);

/** Emits `chunks` chunks of `chunkBytes`, then fails like a client that went away. */
function failingBody(chunks: number, chunkBytes: number): Readable {
  let sent = 0;
  return new Readable({
    read() {
      if (sent++ < chunks) this.push(Buffer.alloc(chunkBytes, 0x61));
      else this.destroy(new Error('client went away'));
    },
  });
}

/** Key and counter of the deterministic byte source; AES-CTR is a fast seekable PRNG. */
function keystream(seed: string, offset: number) {
  const key = createHash('sha256').update(seed).digest();
  const iv = Buffer.alloc(16);
  iv.writeBigUInt64BE(BigInt(Math.floor(offset / 16)), 8);
  const cipher = createCipheriv('aes-256-ctr', key, iv);
  cipher.update(Buffer.alloc(offset % 16));
  return cipher;
}

/**
 * `bytes` pseudo-random bytes generated chunk by chunk (never one big Buffer);
 * `digest()` is the sha256 of what was emitted.
 */
function randomBody(bytes: number, seed: string): { stream: Readable; digest: () => string } {
  const cipher = keystream(seed, 0);
  const hash = createHash('sha256');
  const zeros = Buffer.alloc(MiB);
  let left = bytes;
  const stream = new Readable({
    highWaterMark: MiB,
    read() {
      if (left === 0) return void this.push(null);
      const n = Math.min(left, MiB);
      left -= n;
      const chunk = cipher.update(zeros.subarray(0, n));
      hash.update(chunk);
      this.push(chunk);
    },
  });
  return { stream, digest: () => hash.copy().digest('hex') };
}

/** The `length` bytes `randomBody(…, seed)` emits at `offset`. */
const randomSlice = (seed: string, offset: number, length: number): Buffer => keystream(seed, offset).update(Buffer.alloc(length));

/** Tracks the peak growth of resident memory until `stop()`, which returns it in bytes. */
function memoryPeak(): { stop(): number } {
  const base = process.memoryUsage.rss();
  let peak = base;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 25);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      return Math.max(peak, process.memoryUsage.rss()) - base;
    },
  };
}

async function listAll(driver: StorageDriver, dir: string): Promise<Entry[]> {
  const out: Entry[] = [];
  for await (const e of driver.list(dir)) out.push(e);
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

const names = async (driver: StorageDriver, dir: string): Promise<string[]> => (await listAll(driver, dir)).map((e) => e.name);

async function readAll(driver: StorageDriver, path: string, range?: { start: number; end?: number }): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of await driver.read(path, range)) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** Asserts that `p` rejects with an AppError of `code`, showing what it got instead. */
async function expectCode(p: Promise<unknown>, code: ErrorCode): Promise<void> {
  try {
    await p;
  } catch (e) {
    assert.ok(isAppError(e), `expected AppError ${code}, got ${String((e as Error)?.stack ?? e)}`);
    assert.equal(e.code, code, `expected ${code}, got ${e.code}: ${e.message}`);
    return;
  }
  assert.fail(`expected AppError ${code}, but the call succeeded`);
}

function assertMtime(e: Entry, t0: number, t1: number, precision: number): void {
  assert.ok(e.mtime >= t0 - precision && e.mtime <= t1 + precision, `mtime ${e.mtime} not within [${t0 - precision}, ${t1 + precision}]`);
}
