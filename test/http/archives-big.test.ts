/**
 * Big and long-named ZIPs: a 20,000-byte entry path refused by the request;
 * an extraction whose central directory is too large to read in the request
 * answers 202 first and its op vets the entries before writing anything; a
 * cancel while a 100,000-entry extraction reads its directory or writes its
 * entries ends the op `cancelled`, leaving only whole files. Archives are
 * written with Python's zipfile.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server';
import { needTool, tempDir } from '../helpers/tools';

const skip = needTool('python3', 'python3') ?? false;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Far above the second a cancel needs here; the old reader needed a minute to read this directory once. */
const CANCEL_BOUND_MS = 30_000;

const MAKE = `
import zipfile, sys
d = sys.argv[1]
with zipfile.ZipFile(f"{d}/long.zip", "w") as z:
    # 20,000 bytes in 100 segments of at most 200 bytes: every segment passes the name rules.
    z.writestr(("s" * 199 + "/") * 99 + "f" * 200, "x")
with zipfile.ZipFile(f"{d}/near.zip", "w") as z:
    z.writestr(("s" * 199 + "/") * 19 + "f" * 90, "x")  # 3,890 bytes: too long under a 300-byte destination
with zipfile.ZipFile(f"{d}/wide-slip.zip", "w") as z:
    for i in range(12000): z.writestr(f"folder/file-{i:05}-{'x' * 60}.txt", str(i))
    z.writestr("../evil.txt", "pwned")
with zipfile.ZipFile(f"{d}/huge.zip", "w") as z:
    for i in range(100000): z.writestr(f"d{i % 100}/f{i}.txt", f"{i}\\n" * 20)
`;

describe('archives: big directories and long paths', { skip }, () => {
  let s: TestServer;
  let admin: string;
  let root: string;
  let cleanupRoot: () => void;
  const api = (path: string, body: unknown) => s.api('POST', path, { token: admin, body });
  const op = async (id: string) => (await s.api('GET', `/api/files/ops/${id}`, { token: admin })).body;
  /** Polls the op until `done` holds, within `ms`. */
  const until = async (id: string, done: (o: any) => boolean, ms: number) => {
    const stop = Date.now() + ms;
    for (;;) {
      const o = await op(id);
      if (done(o)) return o;
      if (Date.now() > stop) throw new Error(`op ${id} still ${o.status} after ${ms} ms: ${JSON.stringify(o)}`);
      await sleep(20);
    }
  };
  const ended = (o: any) => ['completed', 'failed', 'cancelled'].includes(o.status);

  before(async () => {
    s = await startTestServer();
    admin = await s.login();
    ({ dir: root, cleanup: cleanupRoot } = tempDir('filedock-bigzip-'));
    execFileSync('python3', ['-c', MAKE, root]);
    const r = await api('/api/admin/storages', { name: 'B', driver: 'local', config: { path: root } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
  });
  after(async () => {
    await s.close();
    cleanupRoot();
  });

  test('a 20,000-byte entry path is refused by the request (list and extract), nothing written', async () => {
    for (const route of ['list', 'extract']) {
      const r = await api(`/api/files/archive/${route}`, { path: '/B/long.zip', dest: '/B/x-long', overwrite: true });
      assert.equal(r.status, 400, `${route}: ${JSON.stringify(r.body).slice(0, 300)}`);
      assert.equal(r.body.error, 'archive_invalid');
      assert.equal(r.body.details.reason, 'path_too_long');
      assert.ok(r.body.details.entry.length <= 300, 'the error body carries a shortened name');
    }
    assert.ok(!existsSync(join(root, 'x-long')));
    // The whole path counts: the destination's length too.
    const dest = `/B/${'d'.repeat(250)}/${'e'.repeat(50)}`;
    const near = await api('/api/files/archive/extract', { path: '/B/near.zip', dest, overwrite: true });
    assert.equal(near.status, 400, JSON.stringify(near.body).slice(0, 300));
    assert.equal(near.body.details.reason, 'path_too_long');
    assert.ok(!existsSync(join(root, 'd'.repeat(250))));
    assert.equal((await api('/api/files/archive/extract', { path: '/B/near.zip', dest: '/B/x-near', overwrite: true })).status, 202);
  });

  test('a directory too large to read in the request: 202 first, then the op refuses zip slip before writing anything', async () => {
    const r = await api('/api/files/archive/extract', { path: '/B/wide-slip.zip', dest: '/B/x-wide', overwrite: true });
    assert.equal(r.status, 202, JSON.stringify(r.body).slice(0, 300));
    const o = await until(r.body.operation_id, ended, 120_000);
    assert.equal(o.status, 'failed', JSON.stringify(o));
    assert.equal(o.error_code, 'archive_invalid');
    assert.equal(o.error_params.reason, 'traversal');
    assert.ok(!existsSync(join(root, 'x-wide')), 'nothing was written');
    assert.ok(!existsSync(join(root, 'evil.txt')));
  });

  /** Every file under `dir` is whole (`f<i>.txt` holds "<i>\n" 20 times) and no temp file is left; returns the count. */
  const wholeFiles = (dir: string): number => {
    if (!existsSync(dir)) return 0;
    let n = 0;
    for (const sub of readdirSync(dir)) {
      assert.ok(!sub.startsWith('.~fd-'), `temp ${sub} left`);
      for (const f of readdirSync(join(dir, sub))) {
        assert.ok(!f.startsWith('.~fd-'), `temp ${sub}/${f} left`);
        const i = /^f(\d+)\.txt$/.exec(f)![1];
        assert.equal(readFileSync(join(dir, sub, f), 'utf8'), `${i}\n`.repeat(20), `${sub}/${f}`);
        n++;
      }
    }
    return n;
  };

  for (const [phase, reached] of [
    ['starts (reading its directory)', (o: any) => o.status !== 'queued'],
    ['writes its entries', (o: any) => (o.bytes_done ?? 0) > 0],
  ] as const) {
    test(`a cancel once a 100,000-entry extraction ${phase} ends it cancelled, leaving only whole files`, async () => {
      const dest = `x-huge-${phase.split(' ')[0]}`;
      const r = await api('/api/files/archive/extract', { path: '/B/huge.zip', dest: `/B/${dest}`, overwrite: true });
      assert.equal(r.status, 202, JSON.stringify(r.body).slice(0, 300));
      const id = r.body.operation_id;
      await until(id, (o) => reached(o) || ended(o), 120_000);
      await api(`/api/files/ops/${id}/cancel`, {});
      const o = await until(id, ended, CANCEL_BOUND_MS);
      assert.equal(o.status, 'cancelled', JSON.stringify(o));
      const files = wholeFiles(join(root, dest));
      assert.ok(files < 100_000, `${files} files written`);
    });
  }
});
