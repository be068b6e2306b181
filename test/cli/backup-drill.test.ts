// Over 60 s in CI (test-timings.json; issue 37): a service under load backed up, restored and started again, on SQLite and PostgreSQL.
/**
 * The restore drill (issue 36): a running service under load (uploads in
 * flight) is backed up with `service backup create`, the archive is restored
 * into a fresh data folder, and a service started on it serves every file,
 * link (PIN still asked, download count kept), version and account. A backup
 * of a newer schema, a damaged archive and a non-empty target are refused.
 * On PostgreSQL the dump goes back into an empty database with pg_restore.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { bootSignedIn, CHILD_ADMIN, SERVICE_CLI, type ChildApi, type ChildServer } from '../helpers/child-server';
import { zipEntries } from '../helpers/zip-read';
import { tempDir } from '../helpers/tools';
import { needPostgres, startPostgres, type PgCluster } from '../helpers/postgres';
import { ZipWriter } from '../../server/lib/zip-writer';

const root = new URL('../..', import.meta.url).pathname;
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** `service …` as a child process (async: the test's upload loop keeps running meanwhile). */
function cli(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...SERVICE_CLI, ...args],
      { cwd: root, env: { ...process.env, SERVICE_UPDATE_CHECK: '0', ...env }, timeout: 120_000 },
      (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

async function login(base: string, email: string, password: string): Promise<{ status: number; token?: string }> {
  const r = await fetch(`${base}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  return { status: r.status, token: r.ok ? (await r.json()).token : undefined };
}

async function upload(base: string, token: string, folder: string, name: string, body: Buffer): Promise<void> {
  const form = new FormData();
  form.append('path', folder);
  form.append('file', new Blob([new Uint8Array(body)]), name);
  const r = await fetch(`${base}/api/files/upload`, { method: 'POST', body: form, headers: { authorization: `Bearer ${token}` } });
  assert.equal(r.status, 200, await r.text());
}

/** Copies the archive `src` to `dst`, the manifest passed through `edit` (the other entries byte for byte). */
async function rewrite(src: string, dst: string, edit: (m: any) => void): Promise<void> {
  const entries = await zipEntries(src, async (s) => Buffer.concat(await s.toArray()), Buffer.alloc(0));
  const m = JSON.parse(entries.get('manifest.json')!.toString('utf8'));
  edit(m);
  entries.set('manifest.json', Buffer.from(JSON.stringify(m)));
  const out = createWriteStream(dst);
  const closed = new Promise<void>((r) => out.once('close', () => r()));
  const zip = new ZipWriter(out);
  for (const [name, bytes] of entries) await zip.addFile(name, Readable.from([bytes]), { size: bytes.length, mtime: Date.now(), compress: true });
  await zip.finish();
  await closed;
}

describe('restore drill: back up a running service under load, restore into a fresh data folder, serve the same', () => {
  const t = tempDir('filedock-backup-drill-');
  const files = join(t.dir, 'files');
  const out = join(t.dir, 'out');
  const data = join(t.dir, 'data');
  const fresh = join(t.dir, 'restored');
  const env = { SERVICE_DEFAULT_STORAGE_DRIVER: 'local', SERVICE_DEFAULT_STORAGE_PATH: files, SERVICE_DEFAULT_STORAGE_NAME: 'Files' };
  let srv: ChildServer | null = null;
  let archive = '';
  const before_ = new Map<string, string>();
  let link: { token: string; id: number } = { token: '', id: 0 };
  let api: ChildApi;

  before(() => {
    mkdirSync(files);
    mkdirSync(out);
  });
  after(async () => {
    await srv?.stop();
    t.cleanup();
  });

  test('the backup is taken while uploads are in flight', async () => {
    ({ srv, api } = await bootSignedIn(data, env));
    const admin = (await login(srv.url, CHILD_ADMIN.email, CHILD_ADMIN.password)).token!;
    const u = await api('POST', '/api/admin/users', { email: 'mara@example.test', username: 'mara', password: 'mara-password-1', role: 'user' });
    assert.equal(u.status, 200, JSON.stringify(u.body));
    for (let i = 0; i < 5; i++) {
      const body = randomBytes(64 * 1024 + i);
      await upload(srv.url, admin, '/Files', `kept-${i}.bin`, body);
      before_.set(`kept-${i}.bin`, sha256(body));
    }
    for (const content of ['first draft\n', 'second draft\n', 'final\n']) {
      const r = await api('POST', '/api/files/save-text', { path: '/Files/notes.md', content });
      assert.equal(r.status, 200, JSON.stringify(r.body));
    }
    before_.set('notes.md', sha256(Buffer.from('final\n')));
    const share = await api('POST', '/api/files/share', { path: '/Files/kept-0.bin', pin: '4321', max_downloads: 5 });
    assert.equal(share.status, 200, JSON.stringify(share.body));
    link = { token: share.body.token, id: share.body.id };
    for (let i = 0; i < 2; i++) {
      const ok: Response = await fetch(`${srv.url}/api/share/${link.token}/verify`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ pin: '4321' }),
      });
      assert.equal(ok.status, 200);
      const dl: Response = await fetch(`${srv.url}/api/share/${link.token}/download?dt=${encodeURIComponent((await ok.json()).download_token)}`);
      assert.equal(dl.status, 200);
      await dl.arrayBuffer();
    }

    // Two upload loops keep writing (files and catalogue rows) for as long as the backup runs.
    let stop = false;
    let inFlight = 0;
    let done = 0;
    const loop = async (n: number) => {
      for (let i = 0; !stop; i++) {
        inFlight++;
        try {
          await upload(srv!.url, admin, '/Files', `load-${n}-${i}.bin`, randomBytes(256 * 1024));
          done++;
        } finally {
          inFlight--;
        }
      }
    };
    const loops = [loop(1), loop(2)];
    for (const end = Date.now() + 30_000; done < 4 && Date.now() < end; ) await new Promise((r) => setTimeout(r, 20));
    assert.ok(inFlight > 0, 'uploads are in flight when the backup starts');
    const made = await cli(['backup', 'create', '--to', out], { SERVICE_DATA_DIR: data });
    const doneDuring = done;
    stop = true;
    await Promise.all(loops);
    assert.equal(made.code, 0, made.stderr);
    assert.ok(doneDuring > 4, `uploads kept finishing while the backup ran (${doneDuring})`);
    const names = readdirSync(out);
    assert.equal(names.length, 1, `one archive and no temp file: ${names.join(', ')}`);
    assert.match(names[0], /^filedock-backup-\d{4}-\d\d-\d\dT[\d-]+Z\.zip$/);
    archive = join(out, names[0]);
    const entries = await zipEntries(archive, async (s) => Buffer.concat(await s.toArray()), Buffer.alloc(0));
    const manifest = JSON.parse(entries.get('manifest.json')!.toString('utf8'));
    assert.equal(manifest.format_version, 1);
    assert.equal(manifest.database, 'sqlite');
    assert.match(manifest.schema, /^\d{14}-/);
    assert.deepEqual(
      manifest.entries
        .map((e: { name: string }) => e.name)
        .sort()
        .slice(0, 2),
      ['database.sqlite', 'secret.key'],
    );
    for (const e of manifest.entries) assert.equal(sha256(entries.get(e.name)!), e.sha256, `${e.name}'s checksum`);
    assert.equal(entries.get('secret.key')!.toString(), readFileSync(join(data, 'secret.key'), 'utf8'));
    const status = await api('GET', '/api/admin/backups');
    assert.equal(status.body.last?.trigger, 'cli', 'the running service sees the last backup');
    await srv.stop();
    srv = null;
  });

  test('restored into a fresh folder, a service serves every file, link, PIN lock, version and account', async () => {
    await srv?.stop();
    assert.ok(archive, 'the backup was made');
    const r = await cli(['backup', 'restore', archive, '--data-dir', fresh], {});
    assert.equal(r.code, 0, r.stderr);
    ({ srv, api } = await bootSignedIn(fresh, env));
    const base = srv.url;
    const listing = await api('GET', '/api/files/manager?path=/Files&limit=1000');
    assert.equal(listing.status, 200, JSON.stringify(listing.body));
    const listed = new Set(listing.body.entries.map((i: { name: string }) => i.name));
    for (const [name, digest] of before_) {
      assert.ok(listed.has(name), `${name} is listed`);
      const raw = await fetch(`${base}/api/files/raw?path=${encodeURIComponent('/Files/' + name)}`, {
        headers: { authorization: `Bearer ${(await login(base, CHILD_ADMIN.email, CHILD_ADMIN.password)).token}` },
      });
      assert.equal(raw.status, 200);
      assert.equal(sha256(Buffer.from(await raw.arrayBuffer())), digest, `${name}'s bytes`);
    }
    const versions = await api('GET', '/api/files/versions?path=/Files/notes.md');
    assert.equal(versions.status, 200);
    assert.equal(versions.body.versions.length, 2, 'both earlier versions are there');
    const meta = await fetch(`${base}/api/files/share/${link.token}`);
    assert.equal(meta.status, 200);
    assert.equal((await meta.json()).requires_pin, true, 'the PIN lock is kept');
    assert.equal((await fetch(`${base}/s/${link.token}`)).status, 401, 'no PIN, no file');
    const wrong = await fetch(`${base}/api/share/${link.token}/verify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ pin: '0000' }),
    });
    assert.equal(wrong.status, 401);
    const mine = await api('GET', '/api/files/share');
    const kept = mine.body.shares.find((s: { token: string }) => s.token === link.token);
    assert.equal(kept.downloads, 2, 'the download count is kept');
    const ok = await fetch(`${base}/api/share/${link.token}/verify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ pin: '4321' }),
    });
    assert.equal(ok.status, 200);
    const dl = await fetch(`${base}/api/share/${link.token}/download?dt=${encodeURIComponent((await ok.json()).download_token)}`);
    assert.equal(dl.status, 200);
    assert.equal(sha256(Buffer.from(await dl.arrayBuffer())), before_.get('kept-0.bin'));
    assert.equal((await login(base, 'mara@example.test', 'mara-password-1')).status, 200, 'accounts sign in');
    assert.equal((await login(base, 'mara@example.test', 'wrong-password-1')).status, 401);
    await srv.stop();
    srv = null;
  });

  test('refused, writing nothing: a newer schema, a damaged archive, a non-empty folder', async () => {
    assert.ok(archive, 'the backup was made');
    const newer = join(t.dir, 'newer.zip');
    await rewrite(archive, newer, (m) => (m.schema = '99991231235959-from-the-future'));
    const a = await cli(['backup', 'restore', newer, '--data-dir', join(t.dir, 'n1')], {});
    assert.equal(a.code, 2, a.stderr);
    assert.match(a.stderr, /schema \(99991231235959-from-the-future\) is newer than this build's/);
    assert.throws(() => readdirSync(join(t.dir, 'n1')), /ENOENT/);

    const bytes = readFileSync(archive);
    const at = bytes.indexOf(Buffer.from('database.sqlite')) + 'database.sqlite'.length + 2000;
    bytes[at] ^= 0xff;
    const damaged = join(t.dir, 'damaged.zip');
    writeFileSync(damaged, bytes);
    const b = await cli(['backup', 'restore', damaged, '--data-dir', join(t.dir, 'n2')], {});
    assert.equal(b.code, 2, b.stderr);
    assert.match(b.stderr, /database\.sqlite (does not match its checksum|is damaged)/);
    assert.throws(() => readdirSync(join(t.dir, 'n2')), /ENOENT/);

    const c = await cli(['backup', 'restore', archive, '--data-dir', fresh], {});
    assert.equal(c.code, 2);
    assert.match(c.stderr, /is not empty/);
  });
});

describe('on PostgreSQL: pg_dump in the archive, pg_restore into an empty database', { skip: needPostgres() ?? undefined }, () => {
  const t = tempDir('filedock-backup-pg-');
  const files = join(t.dir, 'files');
  const out = join(t.dir, 'out');
  let cluster: PgCluster;
  let srv: ChildServer | null = null;

  before(async () => {
    mkdirSync(files);
    mkdirSync(out);
    cluster = await startPostgres();
  });
  after(async () => {
    await srv?.stop();
    await cluster?.destroy();
    t.cleanup();
  });

  test('backed up while serving, refused into a non-empty database or none, restored into an empty one and served', async () => {
    const source = await cluster.createDatabase('backup_src');
    const env = { SERVICE_DEFAULT_STORAGE_DRIVER: 'local', SERVICE_DEFAULT_STORAGE_PATH: files, SERVICE_DEFAULT_STORAGE_NAME: 'Files' };
    let api: ChildApi;
    ({ srv, api } = await bootSignedIn(join(t.dir, 'data'), { ...env, SERVICE_DATABASE_URL: source }));
    assert.equal((await api('POST', '/api/admin/users', { email: 'pia@example.test', username: 'pia', password: 'pia-password-1', role: 'user' })).status, 200);
    const admin = (await login(srv.url, CHILD_ADMIN.email, CHILD_ADMIN.password)).token!;
    const body = randomBytes(100_000);
    await upload(srv.url, admin, '/Files', 'pg.bin', body);
    const share = await api('POST', '/api/files/share', { path: '/Files/pg.bin', pin: '9876' });
    assert.equal(share.status, 200, JSON.stringify(share.body));
    const made = await cli(['backup', 'create', '--to', out], { SERVICE_DATA_DIR: join(t.dir, 'data'), SERVICE_DATABASE_URL: source });
    assert.equal(made.code, 0, made.stderr);
    await srv.stop();
    srv = null;
    const archive = join(out, readdirSync(out)[0]);
    const entries = await zipEntries(archive, async (s) => Buffer.concat(await s.toArray()), Buffer.alloc(0));
    const manifest = JSON.parse(entries.get('manifest.json')!.toString('utf8'));
    assert.equal(manifest.database, 'postgres');
    assert.ok(entries.has('database.pgdump') && !entries.has('database.sqlite'));

    const busy = await cli(['backup', 'restore', archive, '--data-dir', join(t.dir, 'r1')], { SERVICE_DATABASE_URL: source });
    assert.equal(busy.code, 2, busy.stderr);
    assert.match(busy.stderr, /is not empty \(\d+ relations\)/);
    const none = await cli(['backup', 'restore', archive, '--data-dir', join(t.dir, 'r1')], {});
    assert.equal(none.code, 2, none.stderr);
    assert.match(none.stderr, /set SERVICE_DATABASE_URL to an EMPTY database/);
    assert.throws(() => readdirSync(join(t.dir, 'r1')), /ENOENT/, 'refusals write nothing');

    const target = await cluster.createDatabase('backup_dst');
    const fresh = join(t.dir, 'restored');
    const r = await cli(['backup', 'restore', archive, '--data-dir', fresh], { SERVICE_DATABASE_URL: target });
    assert.equal(r.code, 0, r.stderr);
    const kept = readdirSync(fresh);
    assert.ok(kept.includes('secret.key'), kept.join(', '));
    assert.ok(!kept.some((n) => n.includes('pgdump')), `the dump does not stay behind: ${kept.join(', ')}`);
    ({ srv } = await bootSignedIn(fresh, { ...env, SERVICE_DATABASE_URL: target }));
    const token = await login(srv.url, 'pia@example.test', 'pia-password-1');
    assert.equal(token.status, 200, 'accounts sign in');
    const raw = await fetch(`${srv.url}/api/files/raw?path=${encodeURIComponent('/Files/pg.bin')}`, {
      headers: { authorization: `Bearer ${(await login(srv.url, CHILD_ADMIN.email, CHILD_ADMIN.password)).token}` },
    });
    assert.equal(sha256(Buffer.from(await raw.arrayBuffer())), sha256(body));
    const meta = await fetch(`${srv.url}/api/files/share/${share.body.token}`);
    assert.equal((await meta.json()).requires_pin, true);
  });
});
