/**
 * Multi-tenant isolation at the gateways (docs/tenants.md, step 3: "every gateway verb"). Two tenants, alpha and
 * beta, neither the platform's, each with an admin of the same e-mail and password and a storage `Docs`; beta's
 * holds things alpha's does not (`beta-only.txt`, `beta-dir/`) and a `shared.txt` of its own. Alpha's admin signs
 * in to every door as `name@alpha` and calls every verb of the tree the gateways share with beta's paths and with
 * paths that exist nowhere: the answers must be the same, none may carry a beta marker, and beta's storage must be
 * unchanged after. Then each protocol's own lookups with a real client: WebDAV hrefs, SFTP, S3 buckets and keys,
 * NFS mount paths and file handles (the handle of a beta node, sealed with the installation's key, is refused like
 * a missing node: the export's tenant bounds it).
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { GetObjectCommand, ListBucketsCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { s3Client } from './s3-setup';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';
import { onHost } from '../helpers/tenants';
import { p, sshConnect } from '../helpers/sftp-clients';
import { RawFtp } from '../helpers/ftp-client';
import { MOUNT, NFS, RpcClient, dirop, mountRoot } from '../helpers/nfs-client';
import { loadSecretKey, layout } from '../../server/lib/data-dir';
import { Handles } from '../../server/gateways/nfs/handles';
import type { GatewayCore } from '../../server/gateways';
import type { Actor } from '../../server/auth';

const R = Math.random().toString(36).slice(2, 8);
const ADMIN_T = { email: 'boss@same.test', password: 'same-password-1' };
const SECRET = `beta-secret-${R}`;
const DOORS = ['webdav', 'sftp', 'ftp', 's3', 'nfs'] as const;
const req = { ip: '127.0.0.1', ua: 'test' };

/** The error code of a call, or 'ok'; a generator is drained. */
async function outcome(f: () => unknown): Promise<string> {
  try {
    const r = f();
    if (r && typeof (r as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function') for await (const _ of r as AsyncIterable<unknown>);
    else await r;
    return 'ok';
  } catch (e) {
    return (e as { code?: string }).code ?? String(e);
  }
}

/** Every file and folder under `dir` with its bytes, to show a tenant's storage unchanged. */
function snapshot(dir: string, rel = ''): string[] {
  return readdirSync(join(dir, rel), { withFileTypes: true })
    .filter((e) => !e.name.startsWith('.'))
    .flatMap((e) => {
      const r = rel ? `${rel}/${e.name}` : e.name;
      return e.isDirectory() ? [`${r}/`, ...snapshot(dir, r)] : [`${r} ${readFileSync(join(dir, r), 'utf8')}`];
    })
    .sort();
}

describe('tenants: isolation at every gateway verb', () => {
  let s: TestServer;
  let core: GatewayCore;
  const alphaRoot = tempDir('filedock-gwiso-alpha-');
  const betaRoot = tempDir('filedock-gwiso-beta-');
  let betaBefore: string[];
  let alphaToken: string;
  let betaToken: string;
  const ports: Record<string, number> = {};

  before(async () => {
    writeFileSync(join(alphaRoot.dir, 'shared.txt'), 'alpha');
    writeFileSync(join(betaRoot.dir, 'shared.txt'), SECRET);
    writeFileSync(join(betaRoot.dir, 'beta-only.txt'), SECRET);
    mkdirSync(join(betaRoot.dir, 'beta-dir'));
    writeFileSync(join(betaRoot.dir, 'beta-dir', 'inner.txt'), SECRET);
    betaBefore = snapshot(betaRoot.dir);
    s = await startTestServer({
      SERVICE_MULTI_TENANT: '1',
      SERVICE_SFTP_LISTEN: '127.0.0.1:0',
      SERVICE_FTP_LISTEN: '127.0.0.1:0',
      SERVICE_S3_LISTEN: '127.0.0.1:0',
      SERVICE_NFS_LISTEN: '127.0.0.1:0',
    });
    core = s.server.services.gateways;
    for (const g of core.registry.status().gateways) if (g.listen) ports[g.protocol] = Number(g.listen.split(':').at(-1));
    const operator = await s.login();
    const tokens: Record<string, string> = {};
    for (const [slug, root] of [
      ['alpha', alphaRoot.dir],
      ['beta', betaRoot.dir],
    ] as const) {
      const made = await s.api('POST', '/api/platform/tenants', { token: operator, body: { slug, name: slug, admin: ADMIN_T } });
      assert.equal(made.status, 201, JSON.stringify(made.body));
      const token = (await s.api('POST', `/t/${slug}/api/auth/login`, { body: ADMIN_T })).body.token;
      const storage = { name: 'Docs', driver: 'local', rbac_enabled: false, config: { path: root } };
      assert.equal((await s.api('POST', `/t/${slug}/api/admin/storages`, { token, body: storage })).status, 200);
      assert.equal((await s.api('POST', `/t/${slug}/api/files/refresh`, { token, body: { path: '/Docs' } })).status, 200);
      tokens[slug] = token;
    }
    alphaToken = tokens.alpha;
    betaToken = tokens.beta;
    assert.equal((await s.api('POST', '/t/beta/api/files/refresh', { token: betaToken, body: { path: '/Docs/beta-dir' } })).status, 200);
  });
  after(async () => {
    await s?.close();
    alphaRoot.cleanup();
    betaRoot.cleanup();
  });

  test("every verb of the gateways' tree, at every door: beta's paths answer as missing ones, writes stay in alpha", async () => {
    const pairs: Array<[string, (t: ReturnType<GatewayCore['tree']>, path: string) => unknown]> = [
      ['stat', (t, x) => t.stat(x)],
      ['list', (t, x) => t.list(x)],
      ['open', (t, x) => t.open(x)],
      ['delete', (t, x) => t.delete(x)],
      ['move from', (t, x) => t.move(x, '/Docs/moved-away', false)],
      ['copy from', (t, x) => t.copy(x, '/Docs/copied-away', false)],
    ];
    for (const door of DOORS) {
      const actor: Actor = await core.auth.signIn(`${ADMIN_T.email}@alpha`, ADMIN_T.password, req, door);
      const tree = core.tree(actor, door);
      const names: string[] = [];
      for await (const e of tree.list('/')) names.push(e.name);
      assert.deepEqual(names, ['Docs'], `${door}: one storage of the name`);
      const listed: string[] = [];
      for await (const e of tree.list('/Docs')) listed.push(e.name);
      assert.deepEqual(listed.sort(), ['shared.txt'], `${door}: alpha's folder only`);
      for (const [verb, call] of pairs)
        for (const [beta, missing] of [
          ['/Docs/beta-only.txt', '/Docs/nowhere.txt'],
          ['/Docs/beta-dir', '/Docs/nowhere-dir'],
          ['/Docs/beta-dir/inner.txt', '/Docs/nowhere-dir/inner.txt'],
        ]) {
          const a = await outcome(() => call(tree, beta));
          const b = await outcome(() => call(tree, missing));
          assert.equal(a, b, `${door} ${verb} ${beta}: ${a} against ${b} for a missing path`);
          assert.notEqual(a, 'ok', `${door} ${verb} ${beta}`);
        }
      // Writes with beta's names land in alpha's storage.
      const made = `/Docs/beta-dir-${door}`;
      await tree.mkdir(made);
      await tree.write('/Docs/shared.txt', Readable.from([Buffer.from(`alpha by ${door}`)]), { overwrite: true });
      assert.equal((await tree.open('/Docs/shared.txt')).size, `alpha by ${door}`.length);
      assert.equal(readFileSync(join(alphaRoot.dir, 'shared.txt'), 'utf8'), `alpha by ${door}`);
      await tree.delete(made);
    }
    assert.deepEqual(snapshot(betaRoot.dir), betaBefore, "beta's storage is unchanged");
  });

  test("WebDAV: a listing names alpha's things only; beta's file is a 404 like a missing one", async () => {
    const basic = `Basic ${Buffer.from(`${ADMIN_T.email}@alpha:${ADMIN_T.password}`).toString('base64')}`;
    const dav = async (method: string, path: string) => {
      const r = await fetch(s.url + path, { method, headers: { authorization: basic, depth: '1' } });
      return { status: r.status, body: await r.text() };
    };
    const listing = await dav('PROPFIND', '/dav/Docs/');
    assert.equal(listing.status, 207);
    assert.doesNotMatch(listing.body, /beta-only|beta-dir|inner/);
    assert.equal((await dav('GET', '/dav/Docs/beta-only.txt')).status, (await dav('GET', '/dav/Docs/nowhere.txt')).status);
    assert.equal((await dav('GET', '/dav/Docs/beta-only.txt')).status, 404);
    const shared = await dav('GET', '/dav/Docs/shared.txt');
    assert.doesNotMatch(shared.body, new RegExp(SECRET));
  });

  test("SFTP: beta's path is NO_SUCH_FILE like a missing one; a directory listing shows alpha's only", async () => {
    const ssh = await sshConnect(ports.sftp, { username: `${ADMIN_T.email}@alpha`, password: ADMIN_T.password });
    try {
      const sftp = await ssh.sftp();
      assert.equal(await p.code(p.stat(sftp, '/Docs/beta-only.txt')), await p.code(p.stat(sftp, '/Docs/nowhere.txt')));
      assert.equal(await p.code(p.readFile(sftp, '/Docs/beta-dir/inner.txt')), await p.code(p.readFile(sftp, '/Docs/nowhere-dir/inner.txt')));
      assert.equal(await p.code(p.readdir(sftp, '/Docs/beta-dir')), await p.code(p.readdir(sftp, '/Docs/nowhere-dir')));
      assert.deepEqual((await p.readdir(sftp, '/Docs')).map((e) => e.filename).sort(), ['shared.txt']);
      assert.doesNotMatch((await p.readFile(sftp, '/Docs/shared.txt')).toString(), new RegExp(SECRET));
    } finally {
      ssh.end();
    }
  });

  test("FTP: beta's paths answer as missing ones (SIZE, MDTM, CWD, RETR, DELE, RNFR), a listing names alpha's only", async () => {
    const { ftp } = await RawFtp.connect(ports.ftp);
    try {
      await ftp.secure();
      assert.equal((await ftp.login(`${ADMIN_T.email}@alpha`, ADMIN_T.password)).code, 230);
      for (const verb of ['SIZE', 'MDTM', 'DELE', 'RNFR'])
        assert.equal((await ftp.cmd(`${verb} /Docs/beta-dir/inner.txt`)).code, (await ftp.cmd(`${verb} /Docs/nowhere-dir/inner.txt`)).code, verb);
      assert.equal((await ftp.cmd('CWD /Docs/beta-dir')).code, (await ftp.cmd('CWD /Docs/nowhere-dir')).code, 'CWD');
      const retr = async (p: string) => (await ftp.read(`RETR ${p}`)).first.code;
      assert.equal(await retr('/Docs/beta-dir/inner.txt'), await retr('/Docs/nowhere-dir/inner.txt'), 'RETR');
      const listed = (await ftp.read('NLST /Docs')).bytes.toString();
      assert.doesNotMatch(listed, /beta-dir|inner/);
      assert.match(listed, /shared\.txt/);
    } finally {
      await ftp.cmd('QUIT');
    }
    assert.deepEqual(snapshot(betaRoot.dir), betaBefore);
  });

  test("S3: alpha's key sees one bucket `Docs`, alpha's; beta's keys are NoSuchKey like missing ones", async () => {
    const key = await onHost(s, '127.0.0.1')('POST', '/t/alpha/api/auth/keys', {
      token: alphaToken,
      body: { name: 's3', verbs: ['files:read', 'files:write'] },
    });
    assert.equal(key.status, 201, JSON.stringify(key.body));
    const endpoint = core.registry.status().gateways.find((g) => g.protocol === 's3')!.url!;
    const s3 = s3Client(endpoint, key.body.s3);
    try {
      assert.deepEqual(
        (await s3.send(new ListBucketsCommand({}))).Buckets?.map((b) => b.Name),
        ['Docs'],
      );
      const keys = (await s3.send(new ListObjectsV2Command({ Bucket: 'Docs' }))).Contents?.map((o) => o.Key);
      assert.deepEqual(keys, ['shared.txt']);
      const code = (k: string) =>
        s3.send(new GetObjectCommand({ Bucket: 'Docs', Key: k })).then(
          () => 'ok',
          (e) => e.name as string,
        );
      assert.equal(await code('beta-only.txt'), 'NoSuchKey');
      assert.equal(await code('beta-dir/inner.txt'), await code('nowhere-dir/inner.txt'));
      await s3.send(new PutObjectCommand({ Bucket: 'Docs', Key: 'beta-only.txt', Body: 'alpha s3' }));
      assert.equal(readFileSync(join(alphaRoot.dir, 'beta-only.txt'), 'utf8'), 'alpha s3', 'a put with a beta name lands in alpha');
    } finally {
      s3.destroy();
    }
    assert.deepEqual(snapshot(betaRoot.dir), betaBefore);
  });

  test("NFS: each tenant's export of /Docs is its own mount path; a handle naming beta's node through alpha's export is STALE like a missing node", async () => {
    const exportsPath = '/api/admin/gateways/nfs/exports';
    const me = async (slug: string, token: string) => (await s.api('GET', `/t/${slug}/api/auth/me`, { token })).body.user.id as number;
    const alphaExport = await s.api('POST', `/t/alpha${exportsPath}`, {
      token: alphaToken,
      body: { path: '/Docs', clients: '127.0.0.0/8', user_id: await me('alpha', alphaToken) },
    });
    assert.equal(alphaExport.status, 201, JSON.stringify(alphaExport.body));
    const betaExport = await s.api('POST', `/t/beta${exportsPath}`, {
      token: betaToken,
      body: { path: '/Docs', clients: '127.0.0.0/8', user_id: await me('beta', betaToken) },
    });
    assert.equal(betaExport.status, 201, 'each tenant exports its own /Docs');
    assert.equal(alphaExport.body.export.mount_path, '/t/alpha/Docs');
    const c = await RpcClient.open(ports.nfs);
    try {
      assert.equal((await c.call(MOUNT, 1, (w) => w.string('/Docs'))).r.u32(), 2, "a plain /Docs is tenant 1's: none here");
      const listed: string[] = [];
      const ex = await c.call(MOUNT, 5);
      while (ex.r.bool()) {
        listed.push(ex.r.string(1024));
        while (ex.r.bool()) ex.r.string(1024);
      }
      assert.deepEqual(listed.sort(), ['/t/alpha/Docs', '/t/beta/Docs']);
      const fh = await mountRoot(c, '/t/alpha/Docs');
      const lookup = async (name: string) => (await c.call(NFS, 3, (w) => dirop(w, fh, name))).r.u32();
      assert.equal(await lookup('beta-dir'), await lookup('nowhere-dir'));
      assert.equal(await lookup('beta-dir'), 2, 'NFS3ERR_NOENT');
      // A handle of alpha's export naming beta's node, sealed with the installation's own key (what a leak would give).
      const betaNode = (
        await s.server.db.async.sql<{ id: number }>(
          "SELECT id FROM nodes WHERE name = 'inner.txt' AND tenant_id = (SELECT id FROM tenants WHERE slug = 'beta')",
        )
      )[0].id;
      const handles = new Handles(loadSecretKey(layout(s.dataDir)));
      const ref = handles.read(fh);
      const getattr = async (id: number) => (await c.call(NFS, 1, (w) => w.opaque(handles.make({ exportId: ref.exportId, kind: 'node', id })))).r.u32();
      assert.equal(await getattr(Number(betaNode)), await getattr(987654321));
      assert.notEqual(await getattr(Number(betaNode)), 0);
    } finally {
      c.close();
    }
  });
});
