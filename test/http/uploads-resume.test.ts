import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server';
import { needTool, tempDir } from '../helpers/tools';
import { startRcloneWebdav, type RcloneWebdav } from '../helpers/rclone-webdav';

const MiB = 1024 * 1024;
const skip = needTool('rclone', 'rclone');

const chunk = (s: TestServer, token: string, id: string, part: number, data: Buffer) =>
  s.api('POST', `/api/files/upload/chunk?upload_id=${id}&part=${part}`, {
    token,
    raw: new Uint8Array(data),
    headers: { 'content-type': 'application/octet-stream' },
  });

describe('resumable uploads', () => {
  test('a session survives a server restart and a new login; parts already held are reported', async () => {
    const data = tempDir('filedock-resume-data-');
    const files = tempDir('filedock-resume-files-');
    const env = { SERVICE_DATA_DIR: data.dir, SERVICE_UPLOAD_MAX_CHUNK_BYTES: String(MiB) };
    const body = randomBytes(2 * MiB + 10);
    let s = await startTestServer(env);
    try {
      let token = await s.login();
      assert.equal((await s.api('POST', '/api/admin/storages', { token, body: { name: 'Keep', driver: 'local', config: { path: files.dir } } })).status, 200);
      const init = await s.api('POST', '/api/files/upload/init', { token, body: { path: '/Keep/resume.bin', size: body.length, chunk_size: MiB } });
      const id = init.body.upload_id;
      const p1 = await chunk(s, token, id, 1, body.subarray(0, MiB));
      await s.close();
      s = await startTestServer(env);
      token = await s.login();
      const st = await s.api('GET', `/api/files/upload/status?upload_id=${id}`, { token });
      assert.equal(st.status, 200, JSON.stringify(st.body));
      assert.deepEqual(st.body.parts, [{ part: 1, size: MiB, etag: p1.body.etag }]);
      const p2 = await chunk(s, token, id, 2, body.subarray(MiB, 2 * MiB));
      const p3 = await chunk(s, token, id, 3, body.subarray(2 * MiB));
      const fin = await s.api('POST', '/api/files/upload/finalize', {
        token,
        body: { upload_id: id, etags: [p1.body, p2.body, p3.body].map((p) => ({ part: p.part, etag: p.etag })) },
      });
      assert.equal(fin.status, 200, JSON.stringify(fin.body));
      assert.ok(readFileSync(join(files.dir, 'resume.bin')).equals(body));
    } finally {
      await s.close();
      data.cleanup();
      files.cleanup();
    }
  });

  describe('on a storage without multipart (webdav: staged in the data dir)', { skip: skip ?? undefined }, () => {
    let s: TestServer;
    let dav: RcloneWebdav;
    let token: string;
    before(async () => {
      dav = await startRcloneWebdav();
      s = await startTestServer({ SERVICE_UPLOAD_MAX_CHUNK_BYTES: String(MiB) });
      token = await s.login();
      const st = await s.api('POST', '/api/admin/storages', {
        token,
        body: { name: 'Dav', driver: 'webdav', config: { url: dav.url, root: '/files', username: dav.user, password: dav.pass } },
      });
      assert.equal(st.status, 200, JSON.stringify(st.body));
    });
    after(async () => {
      await s?.close();
      await dav?.teardown();
    });

    test('parts out of order, nothing visible before finalize, one whole file after', async () => {
      const body = randomBytes(2 * MiB + 77);
      const init = await s.api('POST', '/api/files/upload/init', { token, body: { path: '/Dav/in/staged.bin', size: body.length, chunk_size: MiB } });
      assert.equal(init.status, 200, JSON.stringify(init.body));
      assert.equal(init.body.presigned_urls, null);
      const id = init.body.upload_id;
      const parts = [];
      for (const n of [3, 1, 2]) parts.push((await chunk(s, token, id, n, body.subarray((n - 1) * MiB, Math.min(n * MiB, body.length)))).body);
      assert.ok(!existsSync(join(dav.dir, 'files/in/staged.bin')));
      assert.equal(readdirSync(s.server.dirs.staging).filter((n) => n.startsWith('upload-')).length, 1);
      const fin = await s.api('POST', '/api/files/upload/finalize', {
        token,
        body: { upload_id: id, etags: parts.map((p) => ({ part: p.part, etag: p.etag })) },
      });
      assert.equal(fin.status, 200, JSON.stringify(fin.body));
      assert.ok(readFileSync(join(dav.dir, 'files/in/staged.bin')).equals(body));
      assert.equal(readdirSync(s.server.dirs.staging).filter((n) => n.startsWith('upload-')).length, 0);
      const list = await s.api('GET', '/api/files/manager?path=/Dav/in', { token });
      assert.deepEqual(
        list.body.entries.map((e: any) => [e.name, e.size]),
        [['staged.bin', body.length]],
      );
    });

    test('abort removes the staged file', async () => {
      const init = await s.api('POST', '/api/files/upload/init', { token, body: { path: '/Dav/gone.bin', size: 5 } });
      await chunk(s, token, init.body.upload_id, 1, Buffer.from('12345'));
      assert.deepEqual((await s.api('POST', '/api/files/upload/abort', { token, body: { upload_id: init.body.upload_id } })).body, { ok: true });
      assert.equal(readdirSync(s.server.dirs.staging).filter((n) => n.startsWith('upload-')).length, 0);
      assert.ok(!existsSync(join(dav.dir, 'files/gone.bin')));
    });
  });
});
