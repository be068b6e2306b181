import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, rmdirSync, writeFileSync, readFileSync, existsSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';
import { readSse } from '../helpers/sse';
import { sqlColumn, sqlValue } from '../helpers/sql';
import { DEFAULT_TENANT } from '../../server/db';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Resolves with the data of the first SSE frame of `event` that satisfies `want`, or null after `ms`. */
async function frame(res: Response, event: string, want: (d: any) => boolean, ms = 5000): Promise<any> {
  const r = readSse(res);
  const f = await r.waitFor((x) => x.event === event && want(x.data), ms);
  await r.close();
  return f?.data ?? null;
}

describe('Files API', () => {
  let s: TestServer;
  let admin: string;
  let user: string;
  let root: string;
  let cleanup: () => void;
  const content = Buffer.from('0123456789abcdefghijklmnopqrstuvwxyz');

  before(async () => {
    ({ dir: root, cleanup } = tempDir('filedock-files-'));
    mkdirSync(join(root, 'b-folder'));
    mkdirSync(join(root, 'a-folder'));
    for (const n of ['file10.txt', 'file9.txt', 'File1.txt']) writeFileSync(join(root, n), n);
    writeFileSync(join(root, 'data.bin'), content);
    writeFileSync(join(root, 'şubat rapor.txt'), 'needle in a haystack of words');
    utimesSync(join(root, 'data.bin'), new Date('2026-01-02T03:04:05Z'), new Date('2026-01-02T03:04:05Z'));
    s = await startTestServer();
    admin = await s.login();
    const st = await s.api('POST', '/api/admin/storages', {
      token: admin,
      body: { rbac_enabled: false, name: 'Docs', driver: 'local', config: { path: root } },
    });
    assert.equal(st.status, 200, JSON.stringify(st.body));
    // An open storage shared by all (issue 39 made new storages closed and gives new people a home on the first one).
    assert.equal((await s.api('PATCH', '/api/admin/homes', { token: admin, body: { enabled: false } })).status, 200);
    await s.api('POST', '/api/admin/users', { token: admin, body: { email: 'u@example.test', username: 'u1', password: 'user-password-1' } });
    user = await s.login('u@example.test', 'user-password-1');
  });
  after(async () => {
    await s.close();
    cleanup();
  });

  const list = (path: string, extra = '', token = admin) => s.api('GET', `/api/files/manager?path=${encodeURIComponent(path)}${extra}`, { token });

  test('listing: shape, folders first, natural order, sort, paging and the keyset cursor', async () => {
    const r = await list('/Docs');
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.path, '/Docs');
    assert.deepEqual(r.body.storage, { name: 'Docs', driver: 'local', readonly: false, offline: false });
    assert.deepEqual(
      r.body.entries.map((e: any) => e.name),
      ['a-folder', 'b-folder', 'data.bin', 'File1.txt', 'file9.txt', 'file10.txt', 'şubat rapor.txt'],
    );
    assert.equal(r.body.total, 7);
    const bin = r.body.entries.find((e: any) => e.name === 'data.bin');
    assert.deepEqual(
      Object.keys(bin).sort(),
      ['app_state', 'etag', 'id', 'is_image', 'is_video', 'lock', 'locked', 'mime', 'modified', 'name', 'perm', 'size', 'thumb_url', 'type'].sort(),
    );
    assert.equal(bin.size, content.length);
    assert.equal(bin.modified, '2026-01-02T03:04:05.000Z');
    assert.equal(bin.perm, 'admin');
    assert.equal(bin.locked, false);
    assert.deepEqual(bin.app_state, []);
    const dir = r.body.entries[0];
    assert.equal(dir.type, 'dir');
    assert.equal(dir.mime, undefined);
    const bySize = await list('/Docs', '&sort=size&dir=desc');
    assert.deepEqual(
      bySize.body.entries.slice(2, 4).map((e: any) => e.name),
      ['data.bin', 'şubat rapor.txt'],
    );
    const page = await list('/Docs', '&limit=2&offset=2');
    assert.deepEqual(
      page.body.entries.map((e: any) => e.name),
      ['data.bin', 'File1.txt'],
    );
    // Walking with the cursor yields every entry once, in order.
    const seen: string[] = [];
    let cursor = '';
    for (let i = 0; i < 10; i++) {
      const p = await list('/Docs', `&limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...p.body.entries.map((e: any) => e.name));
      if (!p.body.next_cursor) break;
      cursor = p.body.next_cursor;
    }
    assert.deepEqual(
      seen,
      r.body.entries.map((e: any) => e.name),
    );
    const bad = await list('/Docs', '&cursor=garbage');
    assert.equal(bad.body.error, 'validation_failed');
  });

  test('listing: the root lists storages; missing paths are 404; files are not folders', async () => {
    const rootList = await list('/', '', user);
    assert.equal(rootList.status, 200);
    assert.deepEqual(
      rootList.body.entries.map((e: any) => [e.name, e.type, e.perm]),
      [['Docs', 'dir', 'editor']],
    );
    assert.equal((await list('/Nope')).status, 404);
    assert.equal((await list('/Docs/missing')).status, 404);
    assert.equal((await list('/Docs/data.bin')).status, 404);
    const noAuth = await s.api('GET', '/api/files/manager?path=/Docs');
    assert.equal(noAuth.status, 401);
  });

  test('raw download: headers, ranges, multipart/byteranges, 416, conditionals, If-Range', async () => {
    const url = `${s.url}/api/files/raw?path=${encodeURIComponent('/Docs/data.bin')}`;
    const h = (extra: Record<string, string> = {}) => ({ headers: { authorization: `Bearer ${admin}`, ...extra } });
    const full = await fetch(url, h());
    assert.equal(full.status, 200);
    assert.deepEqual(Buffer.from(await full.arrayBuffer()), content);
    assert.equal(full.headers.get('content-length'), String(content.length));
    assert.equal(full.headers.get('accept-ranges'), 'bytes');
    assert.equal(full.headers.get('last-modified'), 'Fri, 02 Jan 2026 03:04:05 GMT');
    const etag = full.headers.get('etag')!;
    assert.match(etag, /^"[0-9a-f]+-[0-9a-f]+"$/);
    const one = await fetch(url, h({ range: 'bytes=2-5' }));
    assert.equal(one.status, 206);
    assert.equal(one.headers.get('content-range'), `bytes 2-5/${content.length}`);
    assert.equal(await one.text(), '2345');
    assert.equal(await (await fetch(url, h({ range: 'bytes=-3' }))).text(), 'xyz');
    assert.equal(await (await fetch(url, h({ range: 'bytes=33-' }))).text(), 'xyz');
    const multi = await fetch(url, h({ range: 'bytes=0-1,10-11' }));
    assert.equal(multi.status, 206);
    const boundary = /boundary=(\S+)/.exec(multi.headers.get('content-type')!)![1];
    const text = await multi.text();
    assert.equal(Number(multi.headers.get('content-length')), Buffer.byteLength(text));
    assert.match(
      text,
      new RegExp(`--${boundary}\\r\\nContent-Type: application/octet-stream\\r\\nContent-Range: bytes 0-1/36\\r\\n\\r\\n01\\r\\n--${boundary}\\r\\n`),
    );
    assert.ok(text.endsWith(`ab\r\n--${boundary}--\r\n`));
    const unsat = await fetch(url, h({ range: 'bytes=100-' }));
    assert.equal(unsat.status, 416);
    assert.equal(unsat.headers.get('content-range'), `bytes */${content.length}`);
    assert.equal((await fetch(url, h({ 'if-none-match': etag }))).status, 304);
    assert.equal((await fetch(url, h({ 'if-modified-since': 'Fri, 02 Jan 2026 03:04:05 GMT' }))).status, 304);
    const stale = await fetch(url, h({ range: 'bytes=0-1', 'if-range': '"other"' }));
    assert.equal(stale.status, 200);
    assert.equal((await stale.arrayBuffer()).byteLength, content.length);
    assert.equal((await fetch(url, h({ range: 'bytes=0-1', 'if-range': etag }))).status, 206);
    const named = await fetch(`${s.url}/api/files/raw?path=${encodeURIComponent('/Docs/şubat rapor.txt')}`, h());
    assert.equal(named.headers.get('content-disposition'), `attachment; filename="_ubat rapor.txt"; filename*=UTF-8''%C5%9Fubat%20rapor.txt`);
    assert.match(named.headers.get('content-type')!, /^text\/plain/);
    assert.equal((await fetch(`${s.url}/api/files/raw?path=/Docs/a-folder`, h())).status, 404);
  });

  test('traversal and bad names in every path parameter are refused, nothing outside is touched', async () => {
    writeFileSync(join(root, '..', 'outside-secret'), 'secret');
    const evil = ['/Docs/../outside-secret', '/Docs/..\\outside-secret', '/../etc/passwd', '/Docs/a\u0000b', `/Docs/${'x'.repeat(300)}`, '//Docs/../../x'];
    for (const p of evil) {
      const raw = await s.api('GET', `/api/files/raw?path=${encodeURIComponent(p)}`, { token: admin });
      assert.ok([400, 404].includes(raw.status), `${p} → ${raw.status}`);
      assert.notEqual(raw.body, 'secret');
      for (const [route, body] of [
        ['/api/files/mkdir', { path: p }],
        ['/api/files/delete', { paths: [p] }],
        ['/api/files/move', { from: '/Docs/file9.txt', to: p }],
        ['/api/files/copy', { from: p, to: '/Docs/a-folder' }],
        ['/api/files/save-text', { path: p, content: 'x' }],
        ['/api/files/upload/init', { path: p, size: 1 }],
      ] as const) {
        const r = await s.api('POST', route, { token: admin, body });
        assert.ok(
          r.status === 400 || r.status === 404 || (route === '/api/files/delete' && r.body.failed?.length === 1),
          `${route} ${p} → ${r.status} ${JSON.stringify(r.body)}`,
        );
      }
    }
    // A percent-encoded `..` in a query is decoded once by URL parsing, then refused like `..`.
    for (const q of ['/Docs/%2e%2e/outside-secret', '/Docs/%2E%2E%2Foutside-secret', '%2F..%2F..%2Fetc%2Fpasswd']) {
      const r = await s.api('GET', `/api/files/raw?path=${q}`, { token: admin });
      assert.equal(r.status, 400, q);
      assert.equal(r.body.error, 'bad_path');
    }
    assert.equal(readFileSync(join(root, '..', 'outside-secret'), 'utf8'), 'secret');
    assert.ok(existsSync(join(root, 'file9.txt')));
    const bs = await s.api('POST', '/api/files/mkdir', { token: admin, body: { path: '/Docs/a\\b' } });
    assert.equal(bs.status, 400);
    assert.equal(bs.body.error, 'name_not_allowed');
    assert.equal(bs.body.code, 'NAME_NOT_ALLOWED', 'the spec writes code and reason at the top level');
    assert.equal(bs.body.reason, 'backslash');
    assert.equal(bs.body.details.reason, 'backslash');
    for (const c1 of ['\u0085', '\u0080', '\u009f']) {
      const r = await s.api('POST', '/api/files/mkdir', { token: admin, body: { path: `/Docs/a${c1}b` } });
      assert.deepEqual([r.status, r.body.error, r.body.code, r.body.reason], [400, 'name_not_allowed', 'NAME_NOT_ALLOWED', 'control'], escape(c1));
    }
    const long = await s.api('POST', '/api/files/mkdir', { token: admin, body: { path: `/Docs/${'é'.repeat(200)}` } });
    assert.equal(long.body.error, 'name_too_long');
    const reserved = await s.api('POST', '/api/files/mkdir', { token: admin, body: { path: '/Docs/.service-trash' } });
    assert.equal(reserved.body.error, 'reserved_name');
    const dots = await s.api('POST', '/api/files/rename', { token: admin, body: { path: '/Docs/file9.txt', new_name: ' .. ' } });
    assert.equal(dots.body.error, 'name_not_allowed');
  });

  test('mkdir, rename (name_taken), save-text, newfile, move and copy within a storage', async () => {
    const mk = await s.api('POST', '/api/files/mkdir', { token: admin, body: { path: '/Docs/work/deep' } });
    assert.equal(mk.status, 200, JSON.stringify(mk.body));
    assert.equal(mk.body.entry.type, 'dir');
    const save = await s.api('POST', '/api/files/save-text', { token: admin, body: { path: '/Docs/work/notes.md', content: '# hello' } });
    assert.equal(save.status, 200);
    assert.equal(readFileSync(join(root, 'work/notes.md'), 'utf8'), '# hello');
    const stale = await s.api('POST', '/api/files/save-text', { token: admin, body: { path: '/Docs/work/notes.md', content: 'x', etag: '"nope"' } });
    assert.equal(stale.status, 409);
    const again = await s.api('POST', '/api/files/save-text', {
      token: admin,
      body: { path: '/Docs/work/notes.md', content: '# v2', etag: save.body.entry.etag },
    });
    assert.equal(again.status, 200);
    const nf = await s.api('POST', '/api/files/manager?action=newfile', { token: admin, body: { path: '/Docs/work', name: 'todo', type: 'txt' } });
    assert.equal(nf.status, 200, JSON.stringify(nf.body));
    assert.equal(nf.body.entry.name, 'todo.txt');
    // A typed extension is kept for plain text (issue 39, 11): `ideas.md`, not `ideas.md.txt`.
    const md = await s.api('POST', '/api/files/manager?action=newfile', { token: admin, body: { path: '/Docs/work', name: 'ideas.md', type: 'txt' } });
    assert.equal(md.status, 200, JSON.stringify(md.body));
    assert.equal(md.body.entry.name, 'ideas.md');
    assert.equal(readFileSync(join(root, 'work/ideas.md'), 'utf8'), '');
    assert.equal((await s.api('POST', '/api/files/delete', { token: admin, body: { paths: ['/Docs/work/ideas.md'] } })).status, 200);
    const dupNew = await s.api('POST', '/api/files/manager?action=newfile', { token: admin, body: { path: '/Docs/work', name: 'todo.txt', type: 'txt' } });
    assert.equal(dupNew.body.error, 'name_taken');
    // In the storage's root folder too (the file manager's first screen of a storage).
    const atRoot = await s.api('POST', '/api/files/manager?action=newfile', { token: admin, body: { path: '/Docs', name: 'root-note.txt', type: 'txt' } });
    assert.equal(atRoot.status, 200, JSON.stringify(atRoot.body));
    assert.equal(atRoot.body.entry.name, 'root-note.txt');
    assert.equal(readFileSync(join(root, 'root-note.txt'), 'utf8'), '');
    const office = await s.api('POST', '/api/files/manager?action=newfile', { token: admin, body: { path: '/Docs/work', name: 'x', type: 'docx' } });
    assert.equal(office.body.error, 'validation_failed');
    const taken = await s.api('POST', '/api/files/rename', { token: admin, body: { path: '/Docs/work/todo.txt', new_name: 'notes.md' } });
    assert.equal(taken.status, 409);
    assert.equal(taken.body.error, 'name_taken');
    assert.equal(readFileSync(join(root, 'work/notes.md'), 'utf8'), '# v2');
    const ren = await s.api('POST', '/api/files/rename', { token: admin, body: { path: '/Docs/work/todo.txt', new_name: 'done.txt' } });
    assert.equal(ren.status, 200);
    const id = ren.body.entry.id;
    assert.equal(id, nf.body.entry.id, 'the node id follows a rename');
    const mv = await s.api('POST', '/api/files/move', { token: admin, body: { from: '/Docs/work/done.txt', to: '/Docs/work/deep' } });
    assert.deepEqual(mv.body, { ok: true });
    assert.ok(existsSync(join(root, 'work/deep/done.txt')));
    const clash = await s.api('POST', '/api/files/move', { token: admin, body: { from: '/Docs/work/notes.md', to: '/Docs/work/deep/done.txt' } });
    assert.equal(clash.status, 409);
    const over = await s.api('POST', '/api/files/move', {
      token: admin,
      body: { from: '/Docs/work/notes.md', to: '/Docs/work/deep/done.txt', overwrite: true },
    });
    assert.equal(over.status, 200);
    assert.equal(readFileSync(join(root, 'work/deep/done.txt'), 'utf8'), '# v2');
    const into = await s.api('POST', '/api/files/move', { token: admin, body: { from: '/Docs/work', to: '/Docs/work/deep' } });
    assert.equal(into.status, 409);
    const cp = await s.api('POST', '/api/files/copy', { token: admin, body: { from: '/Docs/data.bin', to: '/Docs/work/copy.bin' } });
    assert.deepEqual(cp.body, { ok: true });
    assert.deepEqual(readFileSync(join(root, 'work/copy.bin')), content);
    const listing = await list('/Docs/work');
    assert.deepEqual(
      listing.body.entries.map((e: any) => e.name),
      ['deep', 'copy.bin'],
    );
  });

  test('a folder copy and a cross-storage move run as ops with progress', async () => {
    const { dir: other, cleanup: c2 } = tempDir('filedock-other-');
    try {
      const st = await s.api('POST', '/api/admin/storages', {
        token: admin,
        body: { rbac_enabled: false, name: 'Other', driver: 'local', config: { path: other } },
      });
      assert.equal(st.status, 200);
      const op = await s.api('POST', '/api/files/copy', { token: admin, body: { from: '/Docs/work', to: '/Other' } });
      assert.equal(op.status, 202, JSON.stringify(op.body));
      assert.match(op.body.operation_id, /^op_/);
      const wait = async (id: string) => {
        // A generous bound: a loaded machine runs the op seconds late, and that is not what this tests.
        for (const end = Date.now() + 30_000; Date.now() < end; ) {
          const o = await s.api('GET', `/api/files/ops/${id}`, { token: admin });
          if (!['queued', 'running'].includes(o.body.status)) return o.body;
          await sleep(30);
        }
        throw new Error('op did not finish in 30 s');
      };
      const done = await wait(op.body.operation_id);
      assert.equal(done.status, 'completed', JSON.stringify(done));
      assert.equal(done.kind, 'files.transfer');
      assert.deepEqual(readFileSync(join(other, 'work/copy.bin')), content);
      assert.equal(readFileSync(join(other, 'work/deep/done.txt'), 'utf8'), '# v2');
      assert.deepEqual(
        (await list('/Other/work')).body.entries.map((e: any) => e.name),
        ['deep', 'copy.bin'],
      );
      const mv = await s.api('POST', '/api/files/move', { token: admin, body: { from: '/Other/work/copy.bin', to: '/Docs/moved.bin' } });
      assert.equal(mv.status, 202);
      assert.equal((await wait(mv.body.operation_id)).status, 'completed');
      assert.ok(!existsSync(join(other, 'work/copy.bin')));
      assert.deepEqual(readFileSync(join(root, 'moved.bin')), content);
      const audit = await sqlColumn(s.server.db, "SELECT action FROM audit WHERE action IN ('file.copy','file.move')");
      assert.ok(audit.includes('file.copy') && audit.includes('file.move'), JSON.stringify(audit));
    } finally {
      c2();
    }
  });

  test('delete answers per path; more than 500 paths is too_many_paths; the root is refused', async () => {
    writeFileSync(join(root, 'gone.txt'), 'x');
    await list('/Docs');
    const r = await s.api('POST', '/api/files/delete', { token: admin, body: { paths: ['/Docs/gone.txt', '/Docs/not-there', '/Docs'] } });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.deleted, ['/Docs/gone.txt']);
    assert.deepEqual(
      r.body.failed.map((f: any) => [f.path, f.error]),
      [
        ['/Docs/not-there', 'not_found'],
        ['/Docs', 'forbidden'],
      ],
    );
    assert.ok(!existsSync(join(root, 'gone.txt')));
    assert.equal(await sqlValue(s.server.db, "SELECT count(*) FROM audit WHERE action = 'file.delete' AND resource = 'Docs://gone.txt'"), 1);
    assert.ok(!(await list('/Docs')).body.entries.some((e: any) => e.name === 'gone.txt'));
    const many = await s.api('POST', '/api/files/delete', { token: admin, body: { paths: Array.from({ length: 501 }, (_, i) => `/Docs/x${i}`) } });
    assert.equal(many.body.error, 'too_many_paths');
    assert.equal(many.body.params.max, 500);
  });

  test('search: names by substring, file text, filters, scope, only readable storages', async () => {
    await s.api('POST', '/api/files/save-text', { token: admin, body: { path: '/Docs/memo.txt', content: 'the quarterly zebra report' } });
    const byName = await s.api('GET', '/api/files/search?q=ubat', { token: admin });
    assert.equal(byName.status, 200, JSON.stringify(byName.body));
    assert.deepEqual(
      byName.body.entries.map((e: any) => e.path),
      ['/Docs/şubat rapor.txt'],
    );
    const short = await s.api('GET', '/api/files/search?q=e9', { token: admin });
    assert.deepEqual(
      short.body.entries.map((e: any) => e.name),
      ['file9.txt'],
    );
    const text = await s.api('GET', '/api/files/search?q=zebra', { token: admin });
    assert.deepEqual(
      text.body.entries.map((e: any) => e.name),
      ['memo.txt'],
    );
    const dirs = await s.api('GET', '/api/files/search?q=folder&type=dir', { token: admin });
    assert.deepEqual(
      dirs.body.entries.map((e: any) => e.name),
      ['a-folder', 'b-folder'],
    );
    const ext = await s.api('GET', '/api/files/search?ext=bin&min_size=10&path=/Docs', { token: admin });
    assert.ok(ext.body.entries.every((e: any) => e.name.endsWith('.bin') && e.size >= 10));
    assert.ok(ext.body.entries.some((e: any) => e.name === 'data.bin'));
    const old = await s.api('GET', '/api/files/search?q=data&before=2026-02-01T00:00:00Z', { token: admin });
    assert.deepEqual(
      old.body.entries.map((e: any) => e.name),
      ['data.bin'],
    );
    const none = await s.api('GET', '/api/files/search', { token: admin });
    assert.equal(none.body.error, 'validation_failed');
    // Through the service (its storages copy follows its own writes; a row changed behind it is not told on PostgreSQL).
    const docs = `/api/admin/storages/${s.server.catalogue.repo.byNameOrUid(DEFAULT_TENANT, 'Docs')!.id}`;
    assert.equal((await s.api('PATCH', docs, { token: admin, body: { rbac_enabled: true } })).status, 200);
    try {
      const hidden = await s.api('GET', '/api/files/search?q=zebra', { token: user });
      assert.deepEqual(hidden.body.entries, []);
      assert.equal((await list('/Docs', '', user)).status, 404);
    } finally {
      assert.equal((await s.api('PATCH', docs, { token: admin, body: { rbac_enabled: false } })).status, 200);
    }
  });

  test('a second browser session with the folder open receives the change frame', async () => {
    const stream = await fetch(`${s.url}/api/events/stream?folder=${encodeURIComponent('/Docs/a-folder')}`, { headers: { authorization: `Bearer ${user}` } });
    assert.equal(stream.status, 200);
    const got = frame(stream, 'change', (d) => d.name === 'hello.txt');
    await sleep(50);
    await s.api('POST', '/api/files/save-text', { token: admin, body: { path: '/Docs/a-folder/hello.txt', content: 'hi' } });
    const f = await got;
    assert.ok(f, 'no change frame arrived');
    assert.equal(f.folder, '/Docs/a-folder');
    assert.equal(f.path, '/Docs/a-folder/hello.txt');
    const events = await sqlColumn(s.server.db, "SELECT event FROM outbox WHERE payload LIKE '%hello.txt%'");
    assert.ok(events.includes('file.uploaded'), JSON.stringify(events));
  });

  test('a listed empty folder removed on disk answers 404 once a Refresh of its parent saw it go (no stale folder probe)', async () => {
    mkdirSync(join(root, 'a-folder', 'brief'));
    assert.equal((await s.api('POST', '/api/files/refresh', { token: admin, body: { path: '/Docs/a-folder' } })).status, 200);
    // Twice: the second listing comes from memory (the folder's probe and page).
    for (let i = 0; i < 2; i++) assert.deepEqual((await list('/Docs/a-folder/brief')).body.entries, []);
    rmdirSync(join(root, 'a-folder', 'brief'));
    // The removal is a change of the parent's rows only (the empty folder has no rows of its own to bump).
    assert.equal((await s.api('POST', '/api/files/refresh', { token: admin, body: { path: '/Docs/a-folder' } })).status, 200);
    assert.equal((await list('/Docs/a-folder/brief')).status, 404);
  });

  test('deleting a folder while it is being listed never answers 500', async () => {
    for (let i = 0; i < 200; i++) writeFileSync(join(root, 'b-folder', `f${i}.txt`), 'x');
    await list('/Docs/b-folder');
    const lists = Array.from({ length: 20 }, () => list('/Docs/b-folder', '&limit=50'));
    const del = s.api('POST', '/api/files/delete', { token: admin, body: { paths: ['/Docs/b-folder'] } });
    const statuses = (await Promise.all(lists)).map((r) => r.status);
    assert.deepEqual((await del).body.deleted, ['/Docs/b-folder']);
    assert.ok(
      statuses.every((x) => x === 200 || x === 404),
      statuses.join(','),
    );
    assert.equal((await list('/Docs/b-folder')).status, 404);
  });
});
