import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { Readable } from 'node:stream';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isAppError } from '../errors';
import { freePort, needTool, tempDir } from '../../test/helpers/tools';
import { EICAR, EICAR_SIGNATURE, eicarDatabase, startClamd, type Clamd } from '../../test/helpers/clamav';
import { ClamdScanner, ClamscanScanner, parseAddress } from './clamav';

const skip = needTool('clamscan', 'clamav') ?? needTool('clamd', 'clamav-daemon') ?? undefined;
const input = (b: Buffer) => ({ open: async () => Readable.from([b]) });

describe('ClamAV scanners against real clamscan and clamd', { skip }, () => {
  let dir: string;
  let cleanup: () => void;
  let clamd: Clamd;
  let silent: Server;
  const held = new Set<Socket>();

  before(async () => {
    ({ dir, cleanup } = tempDir('filedock-clam-'));
    clamd = await startClamd(dir, { streamMaxLength: '1M' });
    silent = createServer((s) => held.add(s)); // accepts, reads, never answers
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
  });
  after(async () => {
    await clamd.stop();
    for (const s of held) s.destroy();
    await new Promise((r) => silent.close(r));
    cleanup();
  });

  test('clamscan: clean, infected by path and by stdin, an unreadable database is an error', async () => {
    const db = eicarDatabase(dir);
    const scan = new ClamscanScanner({ bin: 'clamscan', database: db, maxMb: 10 });
    writeFileSync(join(dir, 'e.com'), EICAR);
    assert.deepEqual(await scan.scan({ localPath: join(dir, 'e.com'), open: async () => Readable.from([]) }), { infected: true, signature: EICAR_SIGNATURE });
    assert.deepEqual(await scan.scan(input(EICAR)), { infected: true, signature: EICAR_SIGNATURE });
    assert.deepEqual(await scan.scan(input(Buffer.from('harmless'))), { infected: false });
    const broken = new ClamscanScanner({ bin: 'clamscan', database: join(dir, 'missing-db'), maxMb: 10 });
    await assert.rejects(broken.scan(input(Buffer.from('x'))), (e) => isAppError(e) && /clamscan exited with 2/.test(e.message));
    assert.equal((await scan.probe()).reachable, true);
  });

  test('clamd: clean, infected, a stream over its limit is an error (never clean), probe', async () => {
    const scan = new ClamdScanner({ address: clamd.address });
    assert.deepEqual(await scan.scan(input(EICAR)), { infected: true, signature: EICAR_SIGNATURE });
    assert.deepEqual(await scan.scan(input(Buffer.from('harmless'))), { infected: false });
    await assert.rejects(scan.scan(input(Buffer.alloc(2 * 1024 * 1024, 7))), (e) => isAppError(e));
    const p = await scan.probe();
    assert.equal(p.reachable, true);
    assert.match(p.version, /ClamAV/);
  });

  test('clamd that is down or hangs: clear errors within the bound', async () => {
    const down = new ClamdScanner({ address: `127.0.0.1:${await freePort()}` });
    await assert.rejects(down.scan(input(EICAR)), (e) => isAppError(e) && /ECONNREFUSED/.test(e.message));
    assert.equal((await down.probe()).reachable, false);
    const hang = new ClamdScanner({ address: `127.0.0.1:${(silent.address() as { port: number }).port}`, timeoutMs: 300 });
    const t0 = Date.now();
    await assert.rejects(hang.scan(input(EICAR)), (e) => isAppError(e) && e.code === 'timeout');
    assert.ok(Date.now() - t0 < 2000);
    assert.deepEqual(parseAddress('[::1]:3310'), { host: '::1', port: 3310 });
    assert.deepEqual(parseAddress('unix:/run/clamd.ctl'), { path: '/run/clamd.ctl' });
    assert.throws(
      () => parseAddress('nonsense'),
      (e) => isAppError(e) && e.code === 'not_configured',
    );
  });
});
