// Over 60 s in CI (test-timings.json; issue 37): a 2 GiB copy, a ZIP extraction and S3 copies, each killed mid-way and resumed by the built service.
/**
 * Long ops survive `kill -9` of the built service and resume from what they
 * committed.
 *
 * A 2 GiB cross-storage copy: the built service runs as a
 * child process with two local storages, the copy is started over HTTP and
 * the server killed at about half-way; after the restart the op goes on from
 * its last committed part (same staging session, the journal's offset, and
 * the new process reads far less than the file from the source) and ends with
 * the same sha256, one file at the target and no staging left behind.
 * Meanwhile the server asks its host to keep the computer awake, and the
 * admin status lists the op among the resumable ones.
 *
 * The same to S3 (s3rver): the multipart upload goes on by its recorded parts.
 *
 * A source changed while the server was down starts that file over (a new
 * staging session, the old one gone); a cancelled copy leaves no staging.
 *
 * A ZIP extraction: the files it recorded before the kill are not written
 * again (same inode), the rest are, every file byte-exact.
 */
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { closeSync, createReadStream, createWriteStream, mkdirSync, openSync, readdirSync, readFileSync, statSync, writeSync } from 'node:fs';
import { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { ZipWriter } from '../../server/lib/zip-writer';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { addLocalStorages, bootSignedIn, crashFolders, CHILD_ADMIN } from '../helpers/child-server';
import { tempDir } from '../helpers/tools';
import { s3rverConfig, startS3rver, type S3rver } from '../helpers/s3rver';

const MiB = 1024 * 1024;
const SIZE = 2048 * MiB;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const boot = (data: string) => bootSignedIn(data, {}, { built: true });

/** Writes `size` deterministic bytes (a seeded 1 MiB block, each MiB stamped with its index) and returns their sha256. */
function generate(path: string, size: number, seed = 'filedock-resume'): string {
  let block = Buffer.alloc(0);
  for (let i = 0; block.length < MiB; i++) block = Buffer.concat([block, createHash('sha512').update(`${seed}-${i}`).digest()]);
  const h = createHash('sha256');
  const fd = openSync(path, 'w');
  try {
    for (let i = 0; i * MiB < size; i++) {
      block.writeUInt32BE(i, 0);
      writeSync(fd, block);
      h.update(block);
    }
  } finally {
    closeSync(fd);
  }
  return h.digest('hex');
}

async function sha256(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(path, { highWaterMark: 4 * MiB })) h.update(chunk as Buffer);
  return h.digest('hex');
}

/** Bytes a process has read through syscalls so far (`rchar` of /proc/<pid>/io). */
function bytesRead(pid: number): number {
  return Number(/rchar:\s*(\d+)/.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))![1]);
}

/** The journal's record of the file being copied in parts: its staging handle and committed parts. */
function chunkState(data: string, opId: string): { handle: string; part_size: number; etags: string[] } | null {
  const db = new Database(join(data, 'filedock.sqlite'), { readonly: true, fileMustExist: true });
  try {
    const row = db.prepare("SELECT value FROM op_journal WHERE op_id = ? AND key LIKE 'c:%'").get(opId) as { value: string } | undefined;
    return row ? JSON.parse(row.value) : null;
  } finally {
    db.close();
  }
}

describe('resumable long ops', () => {
  const cleanups: Array<() => void> = [];
  after(() => cleanups.forEach((c) => c()));

  test('a 2 GiB copy killed at half-way resumes from its last committed part with a byte-exact result', { timeout: 240_000 }, async (tc) => {
    const { data, a, b, cleanup } = crashFolders('filedock-resume-copy-');
    cleanups.push(cleanup);
    const digest = generate(join(a, 'big.bin'), SIZE);

    let { srv, api } = await boot(data);
    try {
      await addLocalStorages(api, { A: a, B: b });
      const copy = await api('POST', '/api/files/copy', { from: '/A/big.bin', to: '/B/big.bin' });
      assert.equal(copy.status, 202, JSON.stringify(copy.body));
      const id = copy.body.operation_id;

      let status = (await api('GET', '/api/admin/status')).body.sleep_inhibitor;
      for (const stop = Date.now() + 10_000; !status.active && Date.now() < stop; await sleep(50))
        status = (await api('GET', '/api/admin/status')).body.sleep_inhibitor;
      assert.equal(status.active, true, JSON.stringify(status));
      assert.deepEqual(
        status.reasons.find((r: { kind: string }) => r.kind === 'files.transfer'),
        { kind: 'files.transfer', count: 1 },
      );
      assert.deepEqual(
        status.resumable_ops.map((o: { id: string }) => o.id),
        [id],
      );
      // Kill at about half-way, by the op's own progress.
      const end = Date.now() + 120_000;
      for (;;) {
        const op = (await api('GET', `/api/files/ops/${id}`)).body;
        assert.notEqual(op.status, 'failed', JSON.stringify(op));
        if (op.bytes_done >= SIZE / 2) break;
        if (Date.now() > end) throw new Error(`no half-way in 120 s: ${JSON.stringify(op)}`);
        await sleep(20);
      }
      assert.deepEqual(
        srv
          .messages()
          .filter((m) => m.type === 'inhibit')
          .at(-1),
        { type: 'inhibit', active: true, reasons: [{ kind: 'files.transfer', count: 1 }] },
      );
      await srv.kill();
      const cut = chunkState(data, id);
      assert.ok(cut, 'the journal holds the file being copied');
      const committed = cut.etags.length * cut.part_size;
      assert.ok(committed > 0 && committed < SIZE, `committed ${committed} of ${SIZE} when killed`);
      assert.deepEqual(readdirSync(b), [], 'nothing visible at the target before the copy completes');

      ({ srv, api } = await boot(data));
      const pid = srv.child.pid!;
      let op: any;
      for (const stop = Date.now() + 120_000; ; ) {
        op = (await api('GET', `/api/files/ops/${id}`)).body;
        if (['completed', 'failed', 'cancelled'].includes(op.status)) break;
        if (Date.now() > stop) throw new Error(`op still ${op.status}`);
        const now = chunkState(data, id);
        if (now) {
          assert.equal(now.handle, cut.handle, 'the same staging session goes on');
          assert.ok(now.etags.length >= cut.etags.length, 'no committed part is forgotten');
        }
        await sleep(50);
      }
      assert.equal(op.status, 'completed', JSON.stringify(op));
      const inhibits = srv.messages().filter((m) => m.type === 'inhibit');
      assert.ok(
        inhibits.some((m) => m.active),
        'the resumed copy kept the computer awake',
      );
      for (
        const stop = Date.now() + 5000;
        srv
          .messages()
          .filter((m) => m.type === 'inhibit')
          .at(-1)?.active !== false;
        await sleep(50)
      )
        if (Date.now() > stop) throw new Error('the inhibitor was not released after the copy');
      const resumedAt = Number(/resumed big\.bin at byte (\d+)/.exec(op.message ?? '')?.[1]);
      assert.ok(resumedAt >= committed, `resumed at ${resumedAt}, at or after the committed ${committed} (message: ${op.message})`);
      // Re-reading from byte 0 would read 2 GiB again; the slack covers the bundle, the database and logs.
      const read = bytesRead(pid);
      assert.ok(read < SIZE - resumedAt + 256 * MiB, `the restarted server read ${read} bytes, the rest is ${SIZE - resumedAt}`);

      tc.diagnostic(`committed at the kill ${committed}, resumed at ${resumedAt}, the restarted server read ${read} bytes`);
      assert.deepEqual(readdirSync(b), ['big.bin'], 'one file at the target, no temp or duplicate');
      assert.equal(statSync(join(b, 'big.bin')).size, SIZE);
      assert.equal(await sha256(join(b, 'big.bin')), digest, 'byte-exact copy');
      const session = JSON.parse(cut.handle).id as string;
      const staged = [data, b].flatMap((dir) => readdirSync(dir, { recursive: true, withFileTypes: true })).filter((d) => d.name === session);
      assert.deepEqual(staged, [], 'no staging session left behind');
      const listing = await api('GET', '/api/files/manager?path=/B');
      assert.deepEqual(
        listing.body.entries.map((e: { name: string; size: number }) => [e.name, e.size]),
        [['big.bin', SIZE]],
      );
    } finally {
      await srv.stop();
    }
  });

  test('a ZIP extraction killed mid-way skips the files it recorded and finishes byte-exact', { timeout: 240_000 }, async (tc) => {
    const t = tempDir('filedock-resume-extract-');
    cleanups.push(t.cleanup);
    const data = join(t.dir, 'data');
    const z = join(t.dir, 'z');
    mkdirSync(z);
    const digests = new Map<string, string>();
    const out = createWriteStream(join(z, 'many.zip'));
    const zip = new ZipWriter(out);
    for (let i = 0; i < 300; i++) {
      const body = Buffer.alloc(512 * 1024, i % 251);
      body.writeUInt32BE(i, 0);
      const name = `d${i % 3}/f${String(i).padStart(3, '0')}.bin`;
      digests.set(name, createHash('sha256').update(body).digest('hex'));
      await zip.addFile(name, Readable.from([body]), { size: body.length, mtime: Date.now(), compress: false });
    }
    await zip.finish();
    out.end();
    await finished(out);

    let { srv, api } = await boot(data);
    try {
      assert.equal((await api('POST', '/api/admin/storages', { name: 'Z', driver: 'local', config: { path: z }, sync_mode: 'poll' })).status, 200);
      const r = await api('POST', '/api/files/archive/extract', { path: '/Z/many.zip', dest: '/Z/out', overwrite: false });
      assert.equal(r.status, 202, JSON.stringify(r.body));
      const id = r.body.operation_id;
      const recorded = () => {
        const db = new Database(join(data, 'filedock.sqlite'), { readonly: true, fileMustExist: true });
        try {
          return (db.prepare("SELECT key FROM op_journal WHERE op_id = ? AND key LIKE 'x:%'").all(id) as Array<{ key: string }>).map((row) => row.key.slice(2));
        } finally {
          db.close();
        }
      };
      for (const stop = Date.now() + 60_000; recorded().length < 60; await sleep(5)) if (Date.now() > stop) throw new Error('the extraction did not get going');
      await srv.kill();
      const done = recorded();
      assert.ok(done.length >= 60 && done.length < 300, `killed mid-way (${done.length} files recorded)`);
      const inodes = new Map(done.map((name) => [name, statSync(join(z, 'out', name)).ino]));

      ({ srv, api } = await boot(data));
      let op: any;
      for (const stop = Date.now() + 120_000; ; await sleep(100)) {
        op = (await api('GET', `/api/files/ops/${id}`)).body;
        if (['completed', 'failed', 'cancelled'].includes(op.status)) break;
        if (Date.now() > stop) throw new Error(`op still ${op.status}`);
      }
      assert.equal(op.status, 'completed', JSON.stringify(op));
      assert.equal(op.result.files, 300);
      tc.diagnostic(`${done.length} of 300 files recorded at the kill`);
      for (const [name, ino] of inodes) assert.equal(statSync(join(z, 'out', name)).ino, ino, `${name} was not written again`);
      for (const [name, digest] of digests)
        assert.equal(
          createHash('sha256')
            .update(readFileSync(join(z, 'out', name)))
            .digest('hex'),
          digest,
          name,
        );
      const names = () =>
        readdirSync(join(z, 'out'), { recursive: true })
          .map(String)
          .filter((n) => n.includes('.'));
      for (const stop = Date.now() + 10_000; names().some((n) => n.includes('.~fd-')); await sleep(50))
        if (Date.now() > stop) throw new Error(`temp files of the killed run left: ${names().filter((n) => n.includes('.~fd-'))}`);
      assert.equal(names().length, 300, 'no duplicate or temp file');
      const listing = await api('GET', '/api/files/manager?path=/Z/out/d0&limit=1');
      assert.equal(listing.body.total, 100, 'the catalogue holds every extracted file');
    } finally {
      await srv.stop();
    }
  });

  test('a copy to S3 killed after two parts goes on with the same multipart upload and its recorded parts', { timeout: 240_000 }, async () => {
    const t = tempDir('filedock-resume-s3-');
    cleanups.push(t.cleanup);
    const data = join(t.dir, 'data');
    const a = join(t.dir, 'a');
    mkdirSync(a);
    const size = 320 * MiB;
    const digest = generate(join(a, 'big.bin'), size);
    let s3: S3rver | undefined;
    let { srv, api } = await boot(data);
    try {
      s3 = await startS3rver();
      assert.equal((await api('POST', '/api/admin/storages', { name: 'A', driver: 'local', config: { path: a }, sync_mode: 'poll' })).status, 200);
      const st = await api('POST', '/api/admin/storages', { name: 'S', driver: 's3', config: s3rverConfig(s3, 'files'), sync_mode: 'poll' });
      assert.equal(st.status, 200, JSON.stringify(st.body));
      const copy = await api('POST', '/api/files/copy', { from: '/A/big.bin', to: '/S/big.bin' });
      assert.equal(copy.status, 202, JSON.stringify(copy.body));
      const id = copy.body.operation_id;
      for (const stop = Date.now() + 120_000; (chunkState(data, id)?.etags.length ?? 0) < 2; await sleep(20))
        if (Date.now() > stop) throw new Error('no two parts in 120 s');
      await srv.kill();
      const cut = chunkState(data, id)!;
      assert.ok(cut.etags.length >= 2 && cut.etags.length < 5, `${cut.etags.length} of 5 parts committed`);

      ({ srv, api } = await boot(data));
      let op: any;
      for (const stop = Date.now() + 120_000; ; await sleep(50)) {
        op = (await api('GET', `/api/files/ops/${id}`)).body;
        if (['completed', 'failed', 'cancelled'].includes(op.status)) break;
        if (Date.now() > stop) throw new Error(`op still ${op.status}`);
        const now = chunkState(data, id);
        if (now) assert.equal(now.handle, cut.handle, 'the same multipart upload goes on');
      }
      assert.equal(op.status, 'completed', JSON.stringify(op));
      const resumedAt = Number(/resumed big\.bin at byte (\d+)/.exec(op.message ?? '')?.[1]);
      assert.ok(resumedAt >= cut.etags.length * cut.part_size, `resumed at ${resumedAt} (message: ${op.message})`);
      const res = await fetch(`${srv.url}/api/files/raw?path=${encodeURIComponent('/S/big.bin')}`, {
        headers: {
          authorization: `Bearer ${(await (await fetch(`${srv.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(CHILD_ADMIN) })).json()).token}`,
        },
      });
      assert.equal(res.status, 200);
      const h = createHash('sha256');
      for await (const chunk of Readable.fromWeb(res.body as never)) h.update(chunk as Buffer);
      assert.equal(h.digest('hex'), digest, 'byte-exact on S3');
      const listing = await api('GET', '/api/files/manager?path=/S');
      assert.deepEqual(
        listing.body.entries.map((e: { name: string; size: number }) => [e.name, e.size]),
        [['big.bin', size]],
      );
    } finally {
      await srv.stop();
      await s3?.close();
    }
  });

  test('a source changed while the server was down is copied anew; a cancelled copy leaves no staging behind', { timeout: 240_000 }, async () => {
    const { data, a, b, cleanup } = crashFolders('filedock-resume-edge-');
    cleanups.push(cleanup);
    const size = 320 * MiB;
    generate(join(a, 'big.bin'), size);
    const sessionLeft = (handle: string) => {
      const session = JSON.parse(handle).id as string;
      return [data, b].flatMap((dir) => readdirSync(dir, { recursive: true, withFileTypes: true })).some((d) => d.name === session);
    };
    const settle = async (id: string) => {
      for (const stop = Date.now() + 120_000; ; await sleep(50)) {
        const op = (await api('GET', `/api/files/ops/${id}`)).body;
        if (['completed', 'failed', 'cancelled'].includes(op.status)) return op;
        if (Date.now() > stop) throw new Error(`op still ${op.status}`);
      }
    };
    let { srv, api } = await boot(data);
    try {
      await addLocalStorages(api, { A: a, B: b });
      const copy = await api('POST', '/api/files/copy', { from: '/A/big.bin', to: '/B/big.bin' });
      const id = copy.body.operation_id;
      for (const stop = Date.now() + 120_000; (chunkState(data, id)?.etags.length ?? 0) < 2; await sleep(10))
        if (Date.now() > stop) throw new Error('no two parts in 120 s');
      await srv.kill();
      const cut = chunkState(data, id);
      assert.ok(cut && cut.etags.length < 5, `killed before the end (${cut?.etags.length} parts recorded)`);
      const changed = generate(join(a, 'big.bin'), size, 'changed-meanwhile');

      ({ srv, api } = await boot(data));
      const op = await settle(id);
      assert.equal(op.status, 'completed', JSON.stringify(op));
      assert.doesNotMatch(op.message ?? '', /resumed/, `nothing of the old content is kept: ${JSON.stringify(op)}`);
      assert.equal(await sha256(join(b, 'big.bin')), changed, 'the copy holds the new content, not a mix');
      assert.equal(sessionLeft(cut.handle), false, 'the old staging session was discarded');

      const again = await api('POST', '/api/files/copy', { from: '/A/big.bin', to: '/B/second.bin' });
      assert.equal(again.status, 202, JSON.stringify(again.body));
      const id2 = again.body.operation_id;
      for (const stop = Date.now() + 120_000; (chunkState(data, id2)?.etags.length ?? 0) < 1; await sleep(10))
        if (Date.now() > stop) throw new Error('no part in 120 s');
      const open = chunkState(data, id2)!;
      assert.equal(sessionLeft(open.handle), true, 'the session is staged while the copy runs');
      assert.equal((await api('POST', `/api/files/ops/${id2}/cancel`)).status, 200);
      const cancelled = await settle(id2);
      assert.equal(cancelled.status, 'cancelled', JSON.stringify(cancelled));
      assert.equal(sessionLeft(open.handle), false, 'a cancelled copy leaves no staging');
      assert.deepEqual(readdirSync(b), ['big.bin'], 'nothing published for the cancelled copy');
    } finally {
      await srv.stop();
    }
  });
});
