/**
 * A storage on a real, really full filesystem (a small tmpfs mounted for the
 * test): uploads answer 507 `insufficient_storage` with the envelope, nothing
 * partial becomes visible, and once space is freed the same chunked session
 * resumes and finalizes byte-exact.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';

const MiB = 1024 * 1024;

/** Mounts a tmpfs of `mib` MiB at a fresh folder; null (a skip reason) when this machine cannot. */
function mountTmpfs(mib: number): { dir: string; unmount: () => void } | string {
  const { dir, cleanup } = tempDir('filedock-full-');
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${mib}m,mode=0755`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (e) {
    cleanup();
    const msg = `cannot mount a tmpfs (run as root): ${(e as Error).message.split('\n')[0]}`;
    if (process.env.CI === 'true' || process.env.CI === '1') throw new Error(`[CI] ${msg}`);
    return msg;
  }
  return {
    dir,
    unmount: () => {
      execFileSync('umount', [dir]);
      cleanup();
    },
  };
}

describe('a full disk answers 507 insufficient_storage and recovers', () => {
  const mounted = mountTmpfs(16);
  const skip = typeof mounted === 'string' ? mounted : false;
  let s: TestServer;
  let token: string;
  let dir: string;
  const filler = () => join(dir, 'filler.bin');
  const visible = () =>
    readdirSync(dir, { recursive: true, encoding: 'utf8' })
      .filter((n) => !n.startsWith('filler'))
      .sort();

  before(async () => {
    if (typeof mounted === 'string') return;
    dir = mounted.dir;
    mkdirSync(join(dir, 'in'));
    s = await startTestServer();
    token = await s.login();
    const r = await s.api('POST', '/api/admin/storages', { token, body: { name: 'Full', driver: 'local', config: { path: dir } } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
  });
  after(async () => {
    if (typeof mounted === 'string') return;
    await s?.close();
    mounted.unmount();
  });

  /** Fills the disk until only about `leaveMiB` MiB are free. */
  const fill = (leaveMiB: number) => {
    const st = statfsSync(dir);
    const free = st.bavail * st.bsize;
    writeFileSync(filler(), Buffer.alloc(Math.max(0, free - leaveMiB * MiB)));
  };
  const is507 = (r: { status: number; body: any }, what: string) => {
    assert.equal(r.status, 507, `${what}: ${JSON.stringify(r.body)}`);
    assert.equal(r.body.error, 'insufficient_storage', what);
    assert.equal(typeof r.body.message, 'string', what);
    assert.ok(r.body.message.length > 0, what);
  };

  test('a single upload over the free space: 507, nothing partial visible, the server answers on', { skip }, async () => {
    fill(1);
    const form = new FormData();
    form.append('path', '/Full/in');
    form.append('file', new Blob([new Uint8Array(randomBytes(3 * MiB))]), 'big.bin');
    const res = await fetch(`${s.url}/api/files/upload`, { method: 'POST', body: form, headers: { authorization: `Bearer ${token}` } });
    is507({ status: res.status, body: await res.json() }, 'single upload');
    assert.deepEqual(visible(), ['in'], 'no temp or partial file is left');
    const list = await s.api('GET', '/api/files/manager?path=/Full/in', { token });
    assert.deepEqual(list.body.entries, []);
    rmSync(filler());
  });

  test('a chunked upload: the part that does not fit is 507, and after freeing space the same session finalizes byte-exact', { skip }, async () => {
    const data = randomBytes(6 * MiB);
    const init = await s.api('POST', '/api/files/upload/init', { token, body: { path: '/Full/in/chunked.bin', size: data.length, chunk_size: MiB } });
    assert.equal(init.status, 200, JSON.stringify(init.body));
    const id = init.body.upload_id;
    fill(2.5);
    const put = (part: number) =>
      s.api('POST', `/api/files/upload/chunk?upload_id=${id}&part=${part}`, {
        token,
        raw: new Uint8Array(data.subarray((part - 1) * MiB, part * MiB)),
        headers: { 'content-type': 'application/octet-stream' },
      });
    const refused: number[] = [];
    for (let part = 1; part <= 6; part++) {
      const r = await put(part);
      if (r.status === 507) {
        is507(r, `part ${part}`);
        refused.push(part);
      } else assert.equal(r.status, 200, JSON.stringify(r.body));
    }
    const status = async () => (await s.api('GET', `/api/files/upload/status?upload_id=${id}`, { token })).body;
    const etags = async () => (await status()).parts.map((p: { part: number; etag: string }) => ({ part: p.part, etag: p.etag }));
    if (refused.length === 0) {
      // The parts were staged elsewhere: the disk is full at publication instead.
      is507(await s.api('POST', '/api/files/upload/finalize', { token, body: { upload_id: id, etags: await etags() } }), 'finalize');
    }
    assert.ok(!visible().includes('in/chunked.bin'), 'nothing is published on a full disk');
    assert.equal((await status()).upload_id, id, 'the session is still open');
    rmSync(filler());
    for (const part of refused) assert.equal((await put(part)).status, 200, `part ${part} again`);
    const fin = await s.api('POST', '/api/files/upload/finalize', { token, body: { upload_id: id, etags: await etags() } });
    assert.equal(fin.status, 200, JSON.stringify(fin.body));
    assert.ok(readFileSync(join(dir, 'in/chunked.bin')).equals(data), 'byte-exact');
  });
});
