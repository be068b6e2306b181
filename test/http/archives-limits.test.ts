import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server';
import { needTool, tempDir } from '../helpers/tools';

const skip = needTool('zip', 'zip') ?? needTool('tar', 'tar') ?? false;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const LIMIT = 200_000;

describe('archives: SERVICE_LIMITS_MAX_ARCHIVE_BYTES and tar listing', { skip }, () => {
  let s: TestServer;
  let admin: string;
  let root: string;
  let cleanupRoot: () => void;
  const api = (path: string, body: unknown) => s.api('POST', path, { token: admin, body });
  const tooLarge = (r: { status: number; body: { error: string; details?: { max?: number } } }, what: string) => {
    assert.equal(r.status, 413, `${what}: ${JSON.stringify(r.body)}`);
    assert.equal(r.body.error, 'archive_too_large', what);
    assert.equal(r.body.details?.max, LIMIT, what);
  };

  before(async () => {
    s = await startTestServer({ SERVICE_LIMITS_MAX_ARCHIVE_BYTES: String(LIMIT) });
    admin = await s.login();
    ({ dir: root, cleanup: cleanupRoot } = tempDir('filedock-zip-limit-'));
    const zip = (name: string, ...args: string[]) => execFileSync('zip', ['-q', ...args, name, 'src', '-r'], { cwd: root });
    mkdirSync(join(root, 'src/sub'), { recursive: true });
    writeFileSync(join(root, 'src/a.txt'), 'alpha\n'.repeat(100));
    writeFileSync(join(root, 'src/sub/b.txt'), 'beta');
    zip('small.zip');
    execFileSync('tar', ['-cf', 'small.tar', 'src'], { cwd: root });
    execFileSync('tar', ['-czf', 'small.tgz', 'src'], { cwd: root });
    // 300 kB of noise: the archive file itself is over the limit.
    writeFileSync(join(root, 'src/noise.bin'), randomBytes(300_000));
    zip('big.zip', '-0');
    execFileSync('tar', ['-cf', 'big.tar', 'src'], { cwd: root });
    execFileSync('rm', ['src/noise.bin'], { cwd: root });
    // 4 MB of zeros: archives of a few kB that declare or inflate far past the limit.
    writeFileSync(join(root, 'src/zeros.bin'), Buffer.alloc(4_000_000));
    zip('dense.zip', '-9');
    execFileSync('tar', ['-czf', 'dense.tar.gz', 'src'], { cwd: root });
    const r = await api('/api/admin/storages', { name: 'L', driver: 'local', config: { path: root } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    for (let i = 0; i < 200 && !s.server.db.sqlite!.prepare("SELECT 1 FROM nodes WHERE path = 'src/zeros.bin'").get(); i++) await sleep(25);
  });
  after(async () => {
    await s.close();
    cleanupRoot();
  });

  test('capabilities report the limit', async () => {
    assert.equal((await s.api('GET', '/api/capabilities')).body.limits.max_archive_bytes, LIMIT);
  });

  test('list: an archive over the limit, or a tar.gz inflating past it, is 413 archive_too_large', async () => {
    assert.equal((await api('/api/files/archive/list', { path: '/L/small.zip' })).status, 200);
    tooLarge(await api('/api/files/archive/list', { path: '/L/big.zip' }), 'big.zip');
    tooLarge(await api('/api/files/archive/list', { path: '/L/big.tar' }), 'big.tar');
    tooLarge(await api('/api/files/archive/list', { path: '/L/dense.tar.gz' }), 'dense.tar.gz');
  });

  test('extract: an archive over the limit, or one declaring more than the limit, is refused before anything is written', async () => {
    tooLarge(await api('/api/files/archive/extract', { path: '/L/big.zip', dest: '/L/x-big', overwrite: false }), 'big.zip');
    tooLarge(await api('/api/files/archive/extract', { path: '/L/dense.zip', dest: '/L/x-dense', overwrite: false }), 'dense.zip');
    assert.ok(!existsSync(join(root, 'x-big')) && !existsSync(join(root, 'x-dense')));
    const ok = await api('/api/files/archive/extract', { path: '/L/small.zip', dest: '/L/x-small', overwrite: false });
    assert.equal(ok.status, 202, JSON.stringify(ok.body));
  });

  test('add: sources totalling more than the limit are refused; a smaller set is accepted', async () => {
    tooLarge(await api('/api/files/archive/add', { paths: ['/L/src'], dest: '/L/made.zip', compression: 'store' }), 'add src');
    assert.ok(!existsSync(join(root, 'made.zip')));
    const ok = await api('/api/files/archive/add', { paths: ['/L/src/a.txt'], dest: '/L/made.zip', compression: 'store' });
    assert.equal(ok.status, 202, JSON.stringify(ok.body));
  });

  test('tar and tar.gz list like ZIPs; tar extraction is refused as unsupported', async () => {
    for (const name of ['small.tar', 'small.tgz']) {
      const r = await api('/api/files/archive/list', { path: `/L/${name}` });
      assert.equal(r.status, 200, `${name}: ${JSON.stringify(r.body)}`);
      const byName = new Map(r.body.entries.map((e: { name: string }) => [e.name, e]));
      assert.deepEqual(byName.get('src/a.txt'), { ...(byName.get('src/a.txt') as object), size: 600, is_dir: false }, name);
      assert.equal((byName.get('src/sub/') as { is_dir: boolean }).is_dir, true, name);
      assert.match((byName.get('src/sub/b.txt') as { modified: string }).modified, /^\d{4}-\d\d-\d\dT/, name);
    }
    const x = await api('/api/files/archive/extract', { path: '/L/small.tar', dest: '/L/x-tar', overwrite: false });
    assert.equal(x.status, 400);
    assert.equal(x.body.details.reason, 'unsupported_format');
    const notTar = await api('/api/files/archive/list', { path: '/L/src/a.txt' });
    assert.equal(notTar.body.error, 'archive_invalid');
  });
});
