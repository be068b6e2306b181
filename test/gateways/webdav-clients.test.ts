// Over 60 s in CI (test-timings.json; issue 37): litmus twice (/dav/ and rclone serve webdav); rclone copies a 1,000-file tree both ways.
/**
 * Real WebDAV clients against /dav/: the litmus conformance suite (against
 * `rclone serve webdav` too, in the same run: we must pass at least as many),
 * and rclone's webdav remote copying a 1,000-file tree up and down, checked
 * both ways with `rclone check`, signed in with an API key.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdirSync, writeFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ADMIN, startTestServer, type TestServer } from '../helpers/server';
import { needTool, tempDir } from '../helpers/tools';
import { startRcloneWebdav } from '../helpers/rclone-webdav';

const run = promisify(execFile);
const skip = needTool('litmus', 'litmus') ?? needTool('rclone', 'rclone');

/** Runs litmus (every suite, keep going) and sums its "of N tests run: P passed" lines. */
async function litmus(url: string, user: string, pass: string, cwd: string): Promise<{ passed: number; run: number; out: string }> {
  const r = await run('timeout', ['300', 'litmus', '-k', url, user, pass], { cwd, maxBuffer: 16 << 20 }).catch((e) => e as { stdout: string });
  let passed = 0;
  let total = 0;
  for (const m of r.stdout.matchAll(/of (\d+) tests run: (\d+) passed/g)) {
    total += Number(m[1]);
    passed += Number(m[2]);
  }
  return { passed, run: total, out: r.stdout };
}

describe('WebDAV with real clients', { skip: skip ?? false }, () => {
  let s: TestServer;
  let root: string;
  let cleanup: () => void;
  let admin: string;

  before(async () => {
    ({ dir: root, cleanup } = tempDir('filedock-davc-'));
    mkdirSync(join(root, 'store'));
    s = await startTestServer();
    admin = await s.login();
    assert.equal(
      (await s.api('POST', '/api/admin/storages', { token: admin, body: { name: 'Box', driver: 'local', config: { path: join(root, 'store') } } })).status,
      200,
    );
  });
  after(async () => {
    await s?.close();
    cleanup?.();
  });

  test('litmus passes every test, and at least as many as rclone serve webdav', async () => {
    const ours = await litmus(`${s.url}/dav/Box/`, ADMIN.email, ADMIN.password, root);
    const rc = await startRcloneWebdav();
    let theirs;
    try {
      theirs = await litmus(rc.url + '/', rc.user, rc.pass, root);
    } finally {
      await rc.teardown();
    }
    console.log(`litmus: filedock ${ours.passed}/${ours.run}, rclone serve webdav ${theirs.passed}/${theirs.run}`);
    assert.ok(theirs.run > 0, theirs.out);
    assert.equal(ours.passed, ours.run, ours.out);
    assert.ok(ours.passed >= theirs.passed && ours.passed >= 72, ours.out);
  });

  test('rclone webdav remote: a 1,000-file tree up and down, rclone check both ways', async () => {
    const made = await s.api('POST', '/api/auth/keys', { token: admin, body: { name: 'rclone', verbs: ['files:read', 'files:write'] } });
    assert.equal(made.status, 201);
    const src = join(root, 'src');
    for (let d = 0; d < 10; d++) {
      mkdirSync(join(src, `d${d}`), { recursive: true });
      for (let f = 0; f < 100; f++) writeFileSync(join(src, `d${d}`, `f${f}.txt`), `file ${d}/${f} `.repeat(f + 1));
    }
    const obscured = (await run('rclone', ['obscure', made.body.token])).stdout.trim();
    const env = {
      ...process.env,
      RCLONE_CONFIG: join(root, 'rclone.conf'),
      RCLONE_CONFIG_FD_TYPE: 'webdav',
      RCLONE_CONFIG_FD_URL: `${s.url}/dav/Box`,
      RCLONE_CONFIG_FD_VENDOR: 'other',
      RCLONE_CONFIG_FD_USER: 'rclone',
      RCLONE_CONFIG_FD_PASS: obscured,
    };
    const rclone = (...args: string[]) => run('timeout', ['240', 'rclone', ...args, '--transfers', '8', '--checkers', '8'], { env, maxBuffer: 16 << 20 });
    await rclone('copy', src, 'fd:tree');
    await rclone('check', src, 'fd:tree');
    assert.equal(readFileSync(join(root, 'store/tree/d3/f7.txt'), 'utf8'), 'file 3/7 '.repeat(8));
    const back = join(root, 'back');
    await rclone('copy', 'fd:tree', back);
    await rclone('check', 'fd:tree', back);
    await rclone('check', src, back);
    // A change on one side is found by check.
    writeFileSync(join(back, 'd0/f0.txt'), 'changed');
    await assert.rejects(rclone('check', 'fd:tree', back));
  });
});
