/**
 * Hand-made ZIPs whose entries lie about their sizes (or carry broken deflate
 * data), fed to every place that reads user bytes: archive list and extract,
 * a share's folder ZIP, a thumbnail and an antivirus scan. None may end the
 * process; extraction fails the op with `archive_invalid` and leaves no byte
 * beyond what the archive declared and no partial file.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { crc32, deflateRawSync } from 'node:zlib';
import { startTestServer, uploadFile, waitForOp, type TestServer } from '../helpers/server';
import { needTool, tempDir } from '../helpers/tools';
import { eicarDatabase } from '../helpers/clamav';

const skip = needTool('unzip', 'unzip') ?? needTool('clamscan', 'clamav') ?? false;

interface CraftedEntry {
  name: string;
  data: Buffer;
  /** The uncompressed size written in the headers (the truth when absent). */
  declared?: number;
  /** Compressed bytes to store instead of deflate(data). */
  raw?: Buffer;
}

/** A deflated ZIP written byte by byte, so its headers can say whatever the test wants. */
function craftZip(entries: CraftedEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name, 'utf8');
    const body = e.raw ?? deflateRawSync(e.data);
    const size = e.declared ?? e.data.length;
    const crc = crc32(e.data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x800, 6);
    local.writeUInt16LE(8, 8);
    local.writeUInt32LE(0x21, 10); // 1980-01-01 00:00
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x800, 8);
    central.writeUInt16LE(8, 10);
    central.writeUInt32LE(0x21, 12);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(body.length, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, body);
    centrals.push(central, name);
    offset += local.length + name.length + body.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}

/** Bytes that do not compress, so a short declared size is exceeded by the first inflated chunk. */
const noise = (n: number) => Buffer.from(Array.from({ length: n }, (_, i) => (i * 2654435761) >>> 24));

const ARCHIVES: Record<string, Buffer> = {
  // The issue's reproduction: declares 1024 bytes, inflates to 16 KiB.
  'longer.zip': craftZip([
    { name: 'first.txt', data: Buffer.from('honest entry\n') },
    { name: 'liar.bin', data: noise(16384), declared: 1024 },
  ]),
  'shorter.zip': craftZip([{ name: 'short.bin', data: noise(100), declared: 4096 }]),
  'garbage.zip': craftZip([{ name: 'broken.bin', data: noise(5000), raw: Buffer.from([0xff, 0xff, 0xff, 0xff, 0x00, 0x11, 0x22]) }]),
};

describe('crafted archives never take the server down', { skip }, () => {
  let s: TestServer;
  let admin: string;
  let root: string;
  let cleanupRoot: () => void;
  let avDir: string;
  let cleanupAv: () => void;
  const api = (path: string, body: unknown) => s.api('POST', path, { token: admin, body });
  const alive = async () => assert.equal((await s.api('GET', '/api/auth/me', { token: admin })).status, 200, 'the server still answers');
  const waitOp = (id: string) => waitForOp(s, admin, id);
  const upload = (folder: string, name: string, bytes: Buffer) => uploadFile(s, admin, folder, name, bytes);
  /** Every name below a folder, hidden ones included (temp files would show here). */
  const tree = (dir: string): string[] => (existsSync(dir) ? readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort() : []);

  before(async () => {
    ({ dir: root, cleanup: cleanupRoot } = tempDir('filedock-crafted-'));
    ({ dir: avDir, cleanup: cleanupAv } = tempDir('filedock-crafted-av-'));
    s = await startTestServer();
    admin = await s.login();
    const r = await api('/api/admin/storages', { name: 'C', driver: 'local', config: { path: root } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    for (const [name, bytes] of Object.entries(ARCHIVES)) await upload('/C', name, bytes);
  });
  after(async () => {
    await s.close();
    cleanupRoot();
    cleanupAv();
  });

  test('list answers from the central directory (the declared sizes) and the server lives on', async () => {
    const r = await api('/api/files/archive/list', { path: '/C/longer.zip' });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(
      r.body.entries.map((e: { name: string; size: number }) => [e.name, e.size]),
      [
        ['first.txt', 13],
        ['liar.bin', 1024],
      ],
    );
    await alive();
  });

  for (const [name, liar] of [
    ['longer.zip', 'liar.bin'],
    ['shorter.zip', 'short.bin'],
    ['garbage.zip', 'broken.bin'],
  ]) {
    test(`extract ${name}: the op fails with archive_invalid, nothing partial is left, the server lives on`, async () => {
      const dest = `x-${name}`;
      const r = await api('/api/files/archive/extract', { path: `/C/${name}`, dest: `/C/${dest}`, overwrite: false });
      assert.equal(r.status, 202, JSON.stringify(r.body));
      const op = await waitOp(r.body.operation_id);
      assert.equal(op.status, 'failed', JSON.stringify(op));
      assert.equal(op.error_code, 'archive_invalid', JSON.stringify(op));
      await alive();
      const left = tree(join(root, dest));
      assert.ok(!left.includes(liar), `${liar} is not visible: ${left}`);
      // Only whole, honest entries may remain: no temp or partial file of the lying one.
      assert.deepEqual(left, name === 'longer.zip' ? ['first.txt'] : []);
      if (name === 'longer.zip') assert.equal(readFileSync(join(root, dest, 'first.txt'), 'utf8'), 'honest entry\n');
      const listing = await s.api('GET', `/api/files/manager?path=${encodeURIComponent(`/C/${dest}`)}`, { token: admin });
      assert.ok(!JSON.stringify(listing.body).includes(liar));
    });
  }

  test('a share folder ZIP that contains the crafted archives is built byte-exact', async () => {
    const b = await api('/api/files/share', { path: '/C' });
    assert.equal(b.status, 200, JSON.stringify(b.body));
    const res = await fetch(`${s.url}/s/${b.body.token}?zip=1`);
    assert.equal(res.status, 200);
    const zip = Buffer.from(await res.arrayBuffer());
    const { dir, cleanup } = tempDir('filedock-crafted-out-');
    try {
      writeFileSync(join(dir, 'share.zip'), zip);
      execFileSync('unzip', ['-q', 'share.zip', '-d', 'out'], { cwd: dir });
      for (const [name, bytes] of Object.entries(ARCHIVES)) assert.deepEqual(readFileSync(join(dir, 'out', name)), bytes, name);
    } finally {
      cleanup();
    }
    await alive();
  });

  test('a thumbnail and an antivirus scan whose source is a crafted archive end in a state, not a crash', async () => {
    const p = await s.api('PATCH', '/api/admin/protection', { token: admin, body: { av_enabled: true, av_mode: 'binary', av_database: eicarDatabase(avDir) } });
    assert.equal(p.status, 200, JSON.stringify(p.body));
    // An office document is a ZIP: this one goes to the office thumbnailer and to the scanner.
    await upload('/C/docs', 'report.docx', ARCHIVES['longer.zip']);
    await upload('/C/docs', 'broken.xlsx', ARCHIVES['garbage.zip']);
    await s.server.queue.idle(60_000);
    await alive();
    for (const name of ['report.docx', 'broken.xlsx']) {
      const node = s.server.db.sqlite!.prepare('SELECT thumb_state FROM nodes WHERE path = ?').get(`docs/${name}`) as { thumb_state: string | null };
      assert.ok(node && ['failed', 'ready', 'none'].includes(node.thumb_state ?? ''), `${name}: ${JSON.stringify(node)}`);
      const scan = s.server.db.sqlite!.prepare('SELECT state FROM av_scans WHERE path = ?').get(`docs/${name}`) as { state: string } | undefined;
      assert.ok(scan && scan.state !== 'infected', `${name}: ${JSON.stringify(scan)}`);
    }
  });
});
