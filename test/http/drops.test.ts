import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SMTPServer } from 'smtp-server';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';
import { sqlRow } from '../helpers/sql';

let s: TestServer;
let admin: string;
let root: { dir: string; cleanup: () => void };
let smtp: SMTPServer;
const mails: Array<{ to: string[]; body: string }> = [];

before(async () => {
  root = tempDir('filedock-drops-');
  mkdirSync(join(root.dir, 'inbox'));
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onRcptTo(addr, _s, cb) {
      cb(addr.address.endsWith('@bad.test') ? new Error('no such user') : undefined);
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        mails.push({ to: session.envelope.rcptTo.map((r) => r.address), body: Buffer.concat(chunks).toString('utf8') });
        cb();
      });
    },
  });
  await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', () => r()));
  const port = (smtp.server.address() as { port: number }).port;
  s = await startTestServer({
    SERVICE_DEFAULT_STORAGE_DRIVER: 'local',
    SERVICE_DEFAULT_STORAGE_PATH: root.dir,
    SERVICE_DEFAULT_STORAGE_NAME: 'Files',
    SERVICE_SMTP_HOST: '127.0.0.1',
    SERVICE_SMTP_PORT: String(port),
    SERVICE_SMTP_SECURE: 'none',
    SERVICE_SMTP_FROM: 'links@example.test',
  });
  admin = await s.login();
});

after(async () => {
  await s.close();
  await new Promise<void>((r) => smtp.close(() => r()));
  root.cleanup();
});

const drop = async (body: Record<string, unknown>) => {
  const r = await s.api('POST', '/api/files/share', { token: admin, body: { path: '/Files/inbox', kind: 'drop', ...body } });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body;
};

test('a chunked, resumable drop lands in its own folder with the note; the uploader sees nothing else', async () => {
  const d = await drop({ drop_settings: { max_files: 2, allowed_ext: ['txt', 'bin'] }, max_uploads: 10 });
  assert.match(d.url, /\/d\//);
  const page = await fetch(`${s.url}/d/${d.token}?lang=tr`);
  assert.equal(page.status, 200);
  assert.match(await page.text(), /Dosya gönder/);
  const base = `/api/public/drop/${d.token}`;
  const sub = await s.api('POST', `${base}/submissions`, { body: { name: '../../Ev\u0000il / Ünal', note: 'hello\u0007 there\nline 2' } });
  assert.equal(sub.status, 200, JSON.stringify(sub.body));
  assert.equal(JSON.stringify(sub.body).includes('inbox'), false);
  const sb = `${base}/submissions/${sub.body.submission_id}`;
  for (const bad of ['../x.txt', 'a\u0001.txt', '.service-trash'])
    assert.equal((await s.api('POST', `${sb}/files`, { body: { name: bad, size: 3 } })).status, 400, bad);
  assert.equal((await s.api('POST', `${sb}/files`, { body: { name: 'x.exe', size: 3 } })).body.details.reason, 'ext_not_allowed');
  assert.equal((await s.api('POST', `${sb}/files`, { body: { name: 'big.bin', size: 501 * 1024 * 1024 } })).status, 413);
  const size = 20 * 1024 * 1024 + 5;
  const data = Buffer.alloc(size, 7);
  const f = await s.api('POST', `${sb}/files`, { body: { name: 'data.bin', size } });
  assert.equal(f.status, 200, JSON.stringify(f.body));
  const cs = f.body.chunk_size;
  assert.ok(cs <= 32 * 1024 * 1024);
  const fb = `${sb}/files/${f.body.upload_id}`;
  const parts = Math.ceil(size / cs);
  const etags: Array<{ part: number; etag: string }> = [];
  // Send the last part first, then ask what the server holds (a resumed page does that).
  const put = async (i: number) => {
    const r = await s.api('PUT', `${fb}/parts/${i}`, {
      raw: data.subarray((i - 1) * cs, Math.min(size, i * cs)),
      headers: { 'content-type': 'application/octet-stream' },
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    etags.push({ part: i, etag: r.body.etag });
  };
  await put(parts);
  assert.equal((await s.api('GET', fb)).body.parts.length, 1);
  for (let i = 1; i < parts; i++) await put(i);
  const fin = await s.api('POST', `${fb}/finalize`, { body: { etags } });
  assert.equal(fin.status, 200, JSON.stringify(fin.body));
  assert.deepEqual(fin.body, { name: 'data.bin', size });
  const second = await s.api('POST', `${sb}/files`, { body: { name: 'data.bin', size: 1 } });
  assert.equal(second.body.name, 'data (2).bin');
  assert.equal((await s.api('POST', `${sb}/files`, { body: { name: 'three.txt', size: 1 } })).body.error, 'too_many');
  const done = await s.api('POST', `${sb}/finish`);
  assert.equal(done.body.received, 1);
  const folders = readdirSync(join(root.dir, 'inbox'));
  assert.equal(folders.length, 1);
  assert.match(folders[0], /^\d{4}-\d{2}-\d{2}_\d{6}_Evil_Ünal$/);
  const inside = readdirSync(join(root.dir, 'inbox', folders[0])).filter((n) => !n.startsWith('.'));
  assert.deepEqual(inside.sort(), ['NOT.txt', 'data.bin']);
  assert.equal(readFileSync(join(root.dir, 'inbox', folders[0], 'NOT.txt'), 'utf8'), 'hello there\nline 2');
  assert.ok(readFileSync(join(root.dir, 'inbox', folders[0], 'data.bin')).equals(data));
  const ev = (await sqlRow<{ payload: string }>(s.server.db, "SELECT payload FROM outbox WHERE event = 'drop.received' ORDER BY id DESC"))!;
  assert.deepEqual(JSON.parse(ev.payload).files, ['data.bin']);
  for (let i = 0; i < 50 && !mails.some((m) => m.to.includes('admin@example.test')); i++) await new Promise((r) => setTimeout(r, 50));
  assert.ok(
    mails.some((m) => m.to.includes('admin@example.test') && m.body.includes('data.bin')),
    'the owner is mailed',
  );
});

test('a drop PIN is checked before anything is written', async () => {
  const d = await drop({ pin: '2468' });
  const base = `/api/public/drop/${d.token}`;
  assert.equal((await s.api('POST', `${base}/submissions`, { body: {} })).status, 401);
  assert.equal((await s.api('POST', `${base}/submissions`, { body: { pin: '1111' } })).body.error, 'pin_wrong');
  assert.equal((await s.api('POST', `${base}/submissions`, { body: { pin: '2468' } })).status, 200);
});

test('share-mail splits address lists and reports sent and failed', async () => {
  const b = await s.api('POST', '/api/files/share', { token: admin, body: { path: '/Files/inbox' } });
  const r = await s.api('POST', '/api/files/permissions/share-mail', {
    token: admin,
    body: { token: b.body.token, email: 'a@example.test, b@example.test\nc@bad.test not-an-address' },
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body.emailed, true);
  assert.deepEqual(r.body.sent, ['a@example.test', 'b@example.test']);
  assert.deepEqual(r.body.failed, ['c@bad.test', 'not-an-address']);
  assert.ok(mails.some((m) => m.to.includes('a@example.test') && m.body.includes(`/s/${b.body.token}`)));
});
