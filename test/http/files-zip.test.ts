/**
 * GET /api/files/zip: a selection of files and folders as one streamed ZIP.
 * Real server on port 0, real local storage; the archive is read back with
 * Info-ZIP's `unzip` and compared byte for byte with the sources.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server';
import { needTool, tempDir } from '../helpers/tools';

const skip = needTool('unzip', 'unzip') ?? false;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const LIMIT = 400_000;

describe('GET /api/files/zip', { skip }, () => {
  let s: TestServer;
  let admin: string;
  let root: string;
  let out: string;
  const cleanups: Array<() => void> = [];
  const big = randomBytes(150_000);

  const zipUrl = (...paths: string[]) => `/api/files/zip?${paths.map((p) => `path=${encodeURIComponent(p)}`).join('&')}`;
  /** Downloads into `out/<name>` and returns the entry list `unzip -Z1` prints. */
  async function fetchZip(name: string, ...paths: string[]): Promise<{ res: Response; entries: string[]; file: string }> {
    const res = await fetch(s.url + zipUrl(...paths), { headers: { authorization: `Bearer ${admin}` } });
    assert.equal(res.status, 200, await res.clone().text());
    const file = join(out, name);
    writeFileSync(file, Buffer.from(await res.arrayBuffer()));
    const entries = execFileSync('unzip', ['-Z1', file], { encoding: 'utf8' }).trim().split('\n').sort();
    return { res, entries, file };
  }

  before(async () => {
    s = await startTestServer({ SERVICE_LIMITS_MAX_ARCHIVE_BYTES: String(LIMIT) });
    admin = await s.login();
    let c;
    ({ dir: root, cleanup: c } = tempDir('filedock-zipdl-'));
    cleanups.push(c);
    ({ dir: out, cleanup: c } = tempDir('filedock-zipdl-out-'));
    cleanups.push(c);
    mkdirSync(join(root, 'photos/trip/.versions'), { recursive: true });
    mkdirSync(join(root, 'photos/empty'), { recursive: true });
    mkdirSync(join(root, 'docs'), { recursive: true });
    writeFileSync(join(root, 'photos/a.bin'), big);
    writeFileSync(join(root, 'photos/trip/ç ı.txt'), 'Türkçe adı\n');
    writeFileSync(join(root, 'photos/trip/.versions/old'), 'service folder');
    writeFileSync(join(root, 'docs/a.bin'), 'same name, other folder');
    writeFileSync(join(root, 'docs/huge.bin'), Buffer.alloc(LIMIT + 1));
    const r = await s.api('POST', '/api/admin/storages', { token: admin, body: { rbac_enabled: false, name: 'Z', driver: 'local', config: { path: root } } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    for (let i = 0; i < 200 && !s.server.db.sqlite!.prepare("SELECT 1 FROM nodes WHERE path = 'docs/huge.bin'").get(); i++) await sleep(25);
  });
  after(async () => {
    await s.close();
    for (const c of cleanups) c();
  });

  test('a folder: its tree with stored entries, named after the folder, service folders left out', async () => {
    const { res, entries, file } = await fetchZip('photos.zip', '/Z/photos');
    assert.equal(res.headers.get('content-type'), 'application/zip');
    assert.match(res.headers.get('content-disposition') ?? '', /^attachment; filename="photos\.zip"/);
    assert.deepEqual(entries, ['photos/', 'photos/a.bin', 'photos/empty/', 'photos/trip/', 'photos/trip/ç ı.txt']);
    // Stored, not deflated (`unzip -v` prints the method per entry).
    assert.match(execFileSync('unzip', ['-v', file], { encoding: 'utf8' }), /150000\s+Stored\s+150000/);
    assert.ok(execFileSync('unzip', ['-p', file, 'photos/a.bin']).equals(big));
    assert.equal(execFileSync('unzip', ['-p', file, 'photos/trip/ç ı.txt'], { encoding: 'utf8' }), 'Türkçe adı\n');
  });

  test('several paths: named after the folder they share, equal names kept apart', async () => {
    const { res, entries, file } = await fetchZip('Z.zip', '/Z/photos/a.bin', '/Z/docs/a.bin', '/Z/photos/trip');
    // photos/ and docs/ meet at the storage's root: the archive takes the storage's name.
    assert.match(res.headers.get('content-disposition') ?? '', /filename="Z\.zip"/);
    assert.deepEqual(entries, ['a (2).bin', 'a.bin', 'trip/', 'trip/ç ı.txt']);
    assert.equal(execFileSync('unzip', ['-p', file, 'a (2).bin'], { encoding: 'utf8' }), 'same name, other folder');
  });

  test('several items of one folder: `<folder>.zip`, not files.zip (issue 39, 19)', async () => {
    const { res, entries } = await fetchZip('photos-sel.zip', '/Z/photos/a.bin', '/Z/photos/trip');
    assert.match(res.headers.get('content-disposition') ?? '', /^attachment; filename="photos\.zip"/);
    assert.deepEqual(entries, ['a.bin', 'trip/', 'trip/ç ı.txt']);
    const deeper = await fetchZip('deeper.zip', '/Z/photos/trip/ç ı.txt', '/Z/photos/empty');
    assert.match(deeper.res.headers.get('content-disposition') ?? '', /filename="photos\.zip"/);
  });

  test('refusals come as the envelope before any byte', async () => {
    const get = (url: string, token = admin) => s.api('GET', url, { token });
    const tooLarge = await get(zipUrl('/Z/docs'));
    assert.equal(tooLarge.status, 413);
    assert.equal(tooLarge.body.error, 'archive_too_large');
    assert.equal(tooLarge.body.details.max, LIMIT);
    const many = await get(zipUrl(...Array.from({ length: 501 }, (_, i) => `/Z/photos/${i}`)));
    assert.equal(many.status, 400);
    assert.equal(many.body.error, 'too_many_paths');
    assert.equal(many.body.details.max, 500);
    const missing = await get(zipUrl('/Z/photos/a.bin', '/Z/nope'));
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error, 'not_found');
    const none = await get('/api/files/zip');
    assert.equal(none.status, 400);
    assert.equal(typeof none.body.message, 'string');
    const trash = await get(zipUrl('/Z/photos/trip/.versions'));
    assert.ok(trash.status >= 400 && trash.status < 500, JSON.stringify(trash.body));
    assert.equal((await s.api('GET', zipUrl('/Z/photos'))).status, 401);
  });

  test('a user without access to the storage gets not_found', async () => {
    const r = await s.api(
      'PATCH',
      `/api/admin/storages/${(await s.api('GET', '/api/admin/storages', { token: admin })).body.storages.find((x: { name: string }) => x.name === 'Z').id}`,
      { token: admin, body: { rbac_enabled: true } },
    );
    assert.equal(r.status, 200, JSON.stringify(r.body));
    // No home on Z either (issue 39): this person has no access to it at all.
    assert.equal((await s.api('PATCH', '/api/admin/homes', { token: admin, body: { enabled: false } })).status, 200);
    const u = await s.api('POST', '/api/admin/users', {
      token: admin,
      body: { email: 'u@example.test', username: 'user1', role: 'user', password: 'user-password-1' },
    });
    assert.ok(u.status === 200 || u.status === 201, JSON.stringify(u.body));
    const user = await s.login('u@example.test', 'user-password-1');
    const res = await s.api('GET', zipUrl('/Z/photos'), { token: user });
    assert.equal(res.status, 404);
    assert.equal(res.body.error, 'not_found');
    // The admin's own archive is unaffected (and the file on disk unchanged).
    assert.ok(readFileSync(join(root, 'photos/a.bin')).equals(big));
  });
});
