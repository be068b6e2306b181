/**
 * The cases every network driver (webdav, ftp) must pass against its real
 * server, beyond the conformance suite: credentials, a silent server, outages
 * and recovery, a server dying mid-transfer, a 1 GiB upload in flat memory,
 * and TLS trust. Each driver's test file calls these inside its own
 * `describe`, whose `before` starts the server.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { Readable } from 'node:stream';
import { isAppError, type ErrorCode } from '../../server/errors';
import type { StorageDriver } from '../../server/storage/types';
import { flatMemoryUpload, slowBody } from '../helpers/bodies';
import type { RestartableServer } from '../helpers/servers';

const MiB = 1024 * 1024;

type Config = Record<string, unknown>;

/** A one-chunk body holding `s`. */
export const text = (s: string): Readable => Readable.from([Buffer.from(s)]);

/** Asserts that `p` rejects with AppError `code`, and that its `params.reason` matches `reason` when given. */
export async function expectCode(p: Promise<unknown>, code: ErrorCode, reason?: RegExp): Promise<void> {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(isAppError(e), `expected AppError ${code}, got ${String(e)}`);
    assert.equal(e.code, code, `got ${e.code}: ${e.message}`);
    if (reason) assert.match(String(e.params.reason), reason);
    return true;
  });
}

/** The sorted names listed in `dir`. */
export async function names(d: StorageDriver, dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of d.list(dir)) out.push(e.name);
  return out.sort();
}

/** How the shared cases reach one driver and its server. */
export interface RemoteTarget {
  /** The server the enclosing `describe` started (read at test time, after `before`). */
  server(): RestartableServer;
  /** A driver on `server()` with a 5 s timeout; `extra` overrides its config keys. */
  driver(extra?: Config): Promise<StorageDriver> | StorageDriver;
  /** The `root` config value for the storage folder `name`. */
  root(name: string): string;
  /** The host path of `path` (below the storage folders `root()` names), to check results from outside the protocol. */
  onDisk(path: string): string;
  /** A driver (1 s timeout) on the plain TCP listener at 127.0.0.1:`port`, which never answers. */
  silentDriver(port: number): Promise<StorageDriver> | StorageDriver;
  /** What the refusal of a wrong password says in `params.reason`. */
  wrongPassword: RegExp;
}

/** Registers the outage, credential and transfer cases; call inside a `describe` whose server runs without TLS. */
export function remoteDriverCases(t: RemoteTarget): void {
  test('a server that accepts but never answers times out as storage_unreachable', async () => {
    const sockets: Socket[] = [];
    const silent = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const { port } = silent.address() as AddressInfo;
    const d = await t.silentDriver(port);
    const t0 = Date.now();
    await expectCode(d.stat(''), 'storage_unreachable');
    assert.ok(Date.now() - t0 < 4000, `gave up after ${Date.now() - t0} ms`);
    await d.close();
    silent.close();
    for (const socket of sockets) socket.destroy();
  });

  test('wrong password is storage_unreachable and names the refusal', async () => {
    const d = await t.driver({ password: 'wrong' });
    await expectCode(d.stat(''), 'storage_unreachable', t.wrongPassword);
    await d.close();
  });

  test('unreachable server is storage_unreachable, then recovers without a new driver', async () => {
    const d = await t.driver({ root: t.root('outage') });
    await d.write('before.txt', text('1'), { size: 1 });
    await t.server().stop();
    // The first call may fail on the dropped session, the next on the refused connection.
    await expectCode(d.stat('before.txt'), 'storage_unreachable');
    const t0 = Date.now();
    await expectCode(d.stat('before.txt'), 'storage_unreachable', /ECONNREFUSED/);
    assert.ok(Date.now() - t0 < 5000, 'a refused connection fails fast');
    await t.server().start();
    assert.equal((await d.stat('before.txt')).size, 1);
    assert.deepEqual(await names(d, ''), ['before.txt']);
    await d.close();
  });

  test('a server restart between two calls is invisible to the caller', async () => {
    const d = await t.driver({ root: t.root('restart') });
    await d.write('kept.txt', text('kept'), { size: 4 });
    await t.server().stop();
    await t.server().start();
    assert.equal((await d.stat('kept.txt')).size, 4);
    await d.close();
  });

  test('a server that dies mid-upload: clear error, old content kept, no temp file visible', async () => {
    const d = await t.driver({ root: t.root('crash') });
    await d.write('f.bin', text('old'), { size: 3 });
    const body = slowBody(64 * 1024, 200);
    const pending = d.write('f.bin', body.stream, { size: 64 * 1024 * 200 });
    pending.catch(() => undefined); // judged below, after the crash
    await body.sent(5);
    await t.server().crash();
    await expectCode(pending, 'storage_unreachable');
    await t.server().start();
    assert.equal(readFileSync(t.onDisk('crash/f.bin'), 'utf8'), 'old');
    assert.deepEqual(await names(d, ''), ['f.bin']);
    await d.close();
  });

  test('a download cut by the server fails the stream instead of ending it short', async () => {
    const d = await t.driver({ root: t.root('drop-read') });
    await d.write('big.bin', Readable.from([Buffer.alloc(32 * MiB, 7)]), { size: 32 * MiB });
    const stream = await d.read('big.bin');
    let got = 0;
    const done = (async () => {
      for await (const c of stream) {
        got += (c as Buffer).length;
        if (got >= MiB && got - (c as Buffer).length < MiB) await t.server().crash();
        await new Promise((r) => setImmediate(r));
      }
    })();
    await expectCode(done, 'storage_unreachable');
    assert.ok(got < 32 * MiB);
    await t.server().start();
    await d.close();
  });

  test('1 GiB upload streams in flat memory', { timeout: 120_000 }, async (ctx) => {
    const d = await t.driver({ root: t.root('gib') });
    const t0 = Date.now();
    const { growth, entry } = await flatMemoryUpload(d, 'one.gib', 1024 * MiB);
    ctx.diagnostic(`1 GiB in ${Date.now() - t0} ms, RSS growth ${Math.round(growth / MiB)} MiB`);
    assert.equal(entry.size, 1024 * MiB);
    assert.ok(growth < 100 * MiB, `RSS grew by ${Math.round(growth / MiB)} MiB`);
    await d.delete('one.gib');
    assert.ok(!existsSync(t.onDisk('gib/one.gib')));
    await d.close();
  });
}

/** Registers the certificate trust cases; call inside a `describe` whose server runs TLS with a self-signed certificate. */
export function remoteTlsCases(t: RemoteTarget): void {
  test('a self-signed certificate is refused by default', async () => {
    const d = await t.driver({ tls_fingerprint: undefined });
    await expectCode(d.stat(''), 'storage_unreachable', /self.signed/i);
    await d.close();
  });

  test('allow_self_signed accepts it; data moves over TLS both ways', async () => {
    const d = await t.driver({ tls_fingerprint: undefined, allow_self_signed: true, root: t.root('any') });
    await d.write('a.txt', text('tls'), { size: 3 });
    assert.equal(readFileSync(t.onDisk('any/a.txt'), 'utf8'), 'tls');
    assert.deepEqual(await names(d, ''), ['a.txt']);
    await d.close();
  });

  test('the pinned fingerprint is accepted; another one is refused before any request', async () => {
    const good = await t.driver({ tls_fingerprint: t.server().fingerprint, root: t.root('pinned') });
    assert.equal((await good.stat('')).type, 'dir');
    await good.write('p.txt', text('pin'), { size: 3 });
    assert.equal(readFileSync(t.onDisk('pinned/p.txt'), 'utf8'), 'pin');
    await good.close();
    const bad = await t.driver({ tls_fingerprint: 'sha256:' + '00'.repeat(32), root: t.root('never') });
    await expectCode(bad.stat(''), 'storage_unreachable', /fingerprint mismatch/);
    assert.ok(!existsSync(t.onDisk('never')), 'no request reached the server');
    await bad.close();
  });
}
