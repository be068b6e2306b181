/**
 * `service store keygen|build|verify` (docs/app-store.md, "Running a store"):
 * a folder of real signed packages (two versions of one app, one of another)
 * made into a store by the CLI, served on loopback, verified by the CLI; a
 * package changed after the build and a wrong key are reported with exit 1.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SERVICE_CLI } from '../helpers/child-server';
import { tempDir } from '../helpers/tools';
import { buildAppPackage, publisherKey, sampleManifest } from '../helpers/app-package';

const root = new URL('../..', import.meta.url).pathname;

/** Asynchronous: the store this test serves must keep answering while the CLI runs. */
const cli = (args: string[]) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
    execFile(process.execPath, [...SERVICE_CLI, ...args], { cwd: root, timeout: 50_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    ),
  );

describe('service store', () => {
  const { dir, cleanup } = tempDir('filedock-store-cli-');
  const site = join(dir, 'site');
  let server: Server;
  let url: string;

  before(async () => {
    const key = publisherKey('acme');
    mkdirSync(site);
    writeFileSync(join(site, 'hello-1.0.0.zip'), await buildAppPackage({ key }));
    writeFileSync(
      join(site, 'hello-1.1.0.zip'),
      await buildAppPackage({ key, manifest: sampleManifest({ version: '1.1.0', permissions: ['files.read', 'state'] }) }),
    );
    writeFileSync(join(site, 'other.zip'), await buildAppPackage({ key, manifest: sampleManifest({ id: 'other', description: 'Another app' }) }));
    server = createServer((req, res) => {
      try {
        res.end(readFileSync(join(site, new URL(req.url!, 'http://x').pathname.slice(1).replace(/\//g, ''))));
      } catch {
        res.statusCode = 404;
        res.end();
      }
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
    cleanup();
  });

  test('keygen, build and verify a store; a changed package and a wrong key exit 1', async () => {
    const storeKey = join(dir, 'store.pem');
    let r = await cli(['store', 'keygen', storeKey]);
    assert.equal(r.code, 0, r.stderr);
    const fp = /fingerprint ([0-9a-f]{64})/.exec(r.stdout)?.[1];
    assert.ok(fp, r.stdout);
    assert.equal((await cli(['store', 'keygen', storeKey])).code, 64, 'an existing key is not replaced');

    r = await cli(['store', 'build', site, '--key', storeKey, '--name', 'Acme apps']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`2 entries \\(3 packages\\), signed by ${fp}`));
    const index = JSON.parse(readFileSync(join(site, 'index.json'), 'utf8'));
    assert.equal(index.name, 'Acme apps');
    const hello = index.entries.find((e: any) => e.id === 'hello');
    assert.deepEqual(
      hello.versions.map((v: any) => [v.version, v.file, v.size, v.permissions]),
      [
        ['1.0.0', 'hello-1.0.0.zip', readFileSync(join(site, 'hello-1.0.0.zip')).length, ['files.read']],
        ['1.1.0', 'hello-1.1.0.zip', readFileSync(join(site, 'hello-1.1.0.zip')).length, ['files.read', 'state']],
      ],
    );
    assert.equal(JSON.parse(readFileSync(join(site, 'index.json.sig'), 'utf8')).key, fp);

    r = await cli(['store', 'verify', url, '--key', storeKey]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /Acme apps: signature good .*; 2 entries, 3 packages/);

    const other = join(site, 'other.zip');
    const bytes = readFileSync(other);
    bytes[50] ^= 0xff;
    writeFileSync(other, bytes);
    r = await cli(['store', 'verify', url, '--key', storeKey]);
    assert.equal(r.code, 1);
    assert.match(r.stdout, /other\.zip: sha256 differs from the index/);
    assert.match(r.stdout, /1 of 3 packages do not match the index/);

    const wrong = join(dir, 'wrong.pem');
    assert.equal((await cli(['store', 'keygen', wrong])).code, 0);
    r = await cli(['store', 'verify', url, '--key', wrong]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /store_signature/);
  });
});
