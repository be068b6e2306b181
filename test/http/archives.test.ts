import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync, existsSync, lstatSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, waitForOp, type TestServer } from '../helpers/server';
import { needTool, tempDir } from '../helpers/tools';

const skip = needTool('zip', 'zip') ?? needTool('unzip', 'unzip') ?? needTool('python3', 'python3') ?? false;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Hostile archives that zip(1) refuses to make, written with Python's zipfile. */
const HOSTILE = `
import zipfile, sys
d = sys.argv[1]
def mk(name, entries, method=zipfile.ZIP_DEFLATED):
    with zipfile.ZipFile(f"{d}/{name}", "w", method) as z:
        for n, data in entries: z.writestr(n, data)
mk("slip.zip", [("ok.txt", "fine"), ("../evil.txt", "pwned")])
mk("abs.zip", [("/etc/evil.txt", "pwned")])
mk("drive.zip", [("C:/evil.txt", "pwned")])
mk("backslash.zip", [("a\\\\..\\\\evil.txt", "pwned")])
mk("bomb.zip", [("zeros.bin", b"\\0" * (40 * 1024 * 1024))])
`;

describe('archives: list, extract, add, safety', { skip }, () => {
  let s: TestServer;
  let admin: string;
  let root: string;
  let cleanupRoot: () => void;
  const api = (path: string, body: unknown) => s.api('POST', path, { token: admin, body });
  const waitOp = (id: string) => waitForOp(s, admin, id);
  const waitNode = async (path: string) => {
    for (let i = 0; i < 200; i++) {
      if (s.server.db.sqlite!.prepare('SELECT 1 FROM nodes WHERE path = ?').get(path)) return;
      await sleep(25);
    }
    throw new Error(`${path} never catalogued`);
  };

  before(async () => {
    s = await startTestServer();
    admin = await s.login();
    ({ dir: root, cleanup: cleanupRoot } = tempDir('filedock-zip-'));
    mkdirSync(join(root, 'src/sub'), { recursive: true });
    writeFileSync(join(root, 'src/a.txt'), 'alpha\n'.repeat(1000));
    writeFileSync(join(root, 'src/sub/b.json'), '{"b": 1}');
    writeFileSync(join(root, 'src/pic.jpg'), Buffer.alloc(5000, 7));
    execFileSync('zip', ['-qr', 'good.zip', 'src'], { cwd: root });
    execFileSync('zip', ['-q', '-P', 'secret', 'locked.zip', 'src/a.txt'], { cwd: root });
    execFileSync('ln', ['-s', '/etc/passwd', 'link'], { cwd: root });
    execFileSync('zip', ['-qy', 'links.zip', 'link', 'src/a.txt'], { cwd: root });
    execFileSync('python3', ['-c', HOSTILE, root]);
    const r = await api('/api/admin/storages', { name: 'Z', driver: 'local', config: { path: root } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    await waitNode('bomb.zip');
  });
  after(async () => {
    await s.close();
    cleanupRoot();
  });

  test('list: names, sizes, folders, times', async () => {
    const r = await api('/api/files/archive/list', { path: '/Z/good.zip' });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const byName = new Map(r.body.entries.map((e: { name: string }) => [e.name, e]));
    assert.deepEqual(byName.get('src/a.txt'), { ...(byName.get('src/a.txt') as object), size: 6000, is_dir: false });
    assert.equal((byName.get('src/sub/') as { is_dir: boolean }).is_dir, true);
    assert.match((byName.get('src/a.txt') as { modified: string }).modified, /^\d{4}-\d\d-\d\dT/);
    assert.equal((await api('/api/files/archive/list', { path: '/Z/src/a.txt' })).body.error, 'archive_invalid');
    assert.equal((await api('/api/files/archive/list', { path: '/Z/missing.zip' })).status, 404);
    assert.equal((await api('/api/files/archive/list', { path: '/Nope/good.zip' })).status, 404);
    assert.equal((await s.api('POST', '/api/files/archive/list', { body: { path: '/Z/good.zip' } })).status, 401);
  });

  test('extract: a 202 op, every file through the write gate; a second run conflicts cleanly; overwrite replaces', async () => {
    const r = await api('/api/files/archive/extract', { path: '/Z/good.zip', dest: '/Z/out', overwrite: false });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    assert.match(r.body.operation_id, /^op_/);
    const op = await waitOp(r.body.operation_id);
    assert.equal(op.status, 'completed', JSON.stringify(op));
    assert.equal(op.result.files, 3);
    assert.equal(readFileSync(join(root, 'out/src/a.txt'), 'utf8'), 'alpha\n'.repeat(1000));
    assert.equal(readFileSync(join(root, 'out/src/sub/b.json'), 'utf8'), '{"b": 1}');
    const node = s.server.db.sqlite!.prepare("SELECT thumb_state FROM nodes WHERE path = 'out/src/pic.jpg'").get() as { thumb_state: string | null };
    assert.ok(node, 'the gate catalogued the extracted file');
    assert.equal(node.thumb_state === null, false, 'and dispatched its thumbnail');
    const again = await api('/api/files/archive/extract', { path: '/Z/good.zip', dest: '/Z/out', overwrite: false });
    assert.equal(again.status, 409);
    assert.equal(again.body.error, 'conflict');
    assert.ok(again.body.details.paths.includes('out/src/a.txt'));
    writeFileSync(join(root, 'out/src/a.txt'), 'changed');
    const over = await api('/api/files/archive/extract', { path: '/Z/good.zip', dest: '/Z/out', overwrite: true });
    assert.equal((await waitOp(over.body.operation_id)).status, 'completed');
    assert.equal(readFileSync(join(root, 'out/src/a.txt'), 'utf8'), 'alpha\n'.repeat(1000));
  });

  test('zip slip, absolute paths, drive letters and backslashes are refused before anything is written', async () => {
    for (const [name, reason] of [
      ['slip', 'traversal'],
      ['abs', 'absolute'],
      ['drive', 'drive_letter'],
      ['backslash', 'backslash'],
    ]) {
      const r = await api('/api/files/archive/extract', { path: `/Z/${name}.zip`, dest: `/Z/x-${name}`, overwrite: true });
      assert.equal(r.status, 400, name);
      assert.equal(r.body.error, 'archive_invalid', name);
      assert.equal(r.body.details.reason, reason, name);
      assert.ok(!existsSync(join(root, `x-${name}`)), name);
    }
    assert.ok(!existsSync(join(root, 'evil.txt')));
  });

  test('encrypted entries, zip bombs and symlinks', async () => {
    const enc = await api('/api/files/archive/extract', { path: '/Z/locked.zip', dest: '/Z/x-locked', overwrite: true });
    assert.equal(enc.body.error, 'archive_encrypted');
    assert.equal(enc.body.details.entry, 'src/a.txt');
    const bomb = await api('/api/files/archive/extract', { path: '/Z/bomb.zip', dest: '/Z/x-bomb', overwrite: true });
    assert.equal(bomb.body.error, 'archive_invalid');
    assert.equal(bomb.body.details.reason, 'compression_ratio');
    const links = await api('/api/files/archive/extract', { path: '/Z/links.zip', dest: '/Z/x-links', overwrite: true });
    const op = await waitOp(links.body.operation_id);
    assert.equal(op.status, 'completed');
    assert.equal(op.result.skipped_symlinks, 1);
    assert.ok(!existsSync(join(root, 'x-links/link')), 'the symlink entry was not materialised');
    assert.ok(lstatSync(join(root, 'x-links/src/a.txt')).isFile());
  });

  test('add: a zip of a folder and a file (deflate for text, store for media) that unzip accepts', async () => {
    const r = await api('/api/files/archive/add', { paths: ['/Z/src', '/Z/good.zip'], dest: '/Z/made.zip', compression: 'deflate' });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    const op = await waitOp(r.body.operation_id);
    assert.equal(op.status, 'completed', JSON.stringify(op));
    const listing = execFileSync('unzip', ['-v', join(root, 'made.zip')], { encoding: 'utf8' });
    assert.match(listing, /Defl:\S*\s.*src\/a\.txt/);
    assert.match(listing, /Stored\s.*src\/pic\.jpg/);
    assert.match(listing, /src\/sub\/b\.json/);
    assert.match(execFileSync('unzip', ['-t', join(root, 'made.zip')], { encoding: 'utf8' }), /No errors detected/);
    const exists = await api('/api/files/archive/add', { paths: ['/Z/src'], dest: '/Z/made.zip', compression: 'store' });
    assert.equal(exists.status, 409);
    const bad = await api('/api/files/archive/add', { paths: ['/Z/src'], dest: '/Z/x.zip', compression: 'bzip2' });
    assert.equal(bad.body.details.field, 'compression');
  });
});
