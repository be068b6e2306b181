/**
 * `service store keygen|build|verify|license|revoke` (docs/app-store.md, "Running a store"):
 * a folder of real signed packages (two versions of one app, one of another)
 * made into a store by the CLI, served on loopback, verified by the CLI; a
 * package changed after the build and a wrong key are reported with exit 1;
 * a licence sold and revoked by the CLI as the files the service reads.
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
import { createPrivateKey, createPublicKey, verify } from 'node:crypto';
import { decodeLicense } from '../../server/plugins/license';
import { licenceFile } from '../../server/store/licence-files';
import { verifySigned } from '../../server/store/format';

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
    assert.match(r.stdout, /Acme apps: signature good .*; 2 entries, 3 files/);

    const other = join(site, 'other.zip');
    const bytes = readFileSync(other);
    bytes[50] ^= 0xff;
    writeFileSync(other, bytes);
    r = await cli(['store', 'verify', url, '--key', storeKey]);
    assert.equal(r.code, 1);
    assert.match(r.stdout, /other\.zip: sha256 differs from the index/);
    assert.match(r.stdout, /1 of 3 files do not match the index/);

    const wrong = join(dir, 'wrong.pem');
    assert.equal((await cli(['store', 'keygen', wrong])).code, 0);
    r = await cli(['store', 'verify', url, '--key', wrong]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /store_signature/);
  });

  test('license writes a sold licence under its purchase code; revoke signs the revocation list', async () => {
    const storeKey = join(dir, 'store.pem');
    let r = await cli(['store', 'license', site, '--key', storeKey, '--store', 'shop', '--app', 'hello', '--licensee', 'Acme Ltd', '--seats', '3']);
    assert.equal(r.code, 0, r.stderr);
    const code = /purchase code ([0-9A-Z-]+)/.exec(r.stdout)?.[1];
    assert.match(code ?? '', /^[0-9A-Z]{5}(-[0-9A-Z]{5}){3}$/);
    const token = readFileSync(join(site, licenceFile(code!)), 'utf8').trim();
    const decoded = decodeLicense(token)!;
    assert.deepEqual([decoded.payload.app, decoded.payload.store, decoded.payload.licensee, decoded.payload.seats], ['hello', 'shop', 'Acme Ltd', 3]);
    const pub = createPublicKey(createPrivateKey(readFileSync(storeKey)));
    assert.ok(verify(null, Buffer.from(decoded.body, 'ascii'), pub, decoded.sig), 'signed by the store key');
    assert.equal((await cli(['store', 'license', site, '--key', storeKey, '--app', 'hello'])).code, 64, 'the store and licensee are required');

    r = await cli(['store', 'revoke', site, '--key', storeKey, decoded.payload.id, 'lic-old']);
    assert.equal(r.code, 0, r.stderr);
    const list = readFileSync(join(site, 'revocations.json'));
    verifySigned(list, readFileSync(join(site, 'revocations.json.sig')), pub.export({ type: 'spki', format: 'pem' }).toString(), 'revocations.json');
    assert.deepEqual(
      JSON.parse(list.toString()).revoked.map((x: any) => x.id),
      [decoded.payload.id, 'lic-old'],
    );
    assert.equal((await cli(['store', 'revoke', site, '--key', storeKey, 'lic-old'])).code, 0);
    assert.equal(JSON.parse(readFileSync(join(site, 'revocations.json'), 'utf8')).revoked.length, 2, 'an id already listed is not listed twice');
  });
});
