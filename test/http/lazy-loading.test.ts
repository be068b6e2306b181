/**
 * A lean start (issue 37; docs/architecture.md, "Loading on first use"): the built service, run with
 * scripts/load-recorder.mjs, loads none of the optional subsystems' packages for `service version` or
 * while idle with no storages, and loads each one when it is first used (an S3 storage, the assistant's
 * provider test, an MCP request, an SSH key, sharp at the first thumbnail). Needs the build (`node scripts/build.mjs`).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { addLocalStorages, bootSignedIn, type ChildApi, type ChildServer } from '../helpers/child-server';
import { startS3rver, s3rverConfig, type S3rver } from '../helpers/s3rver';
import { startFakeAnthropic, type FakeLlm } from '../helpers/fake-llm';
import { sshKeyLine, tempDir } from '../helpers/tools';

const root = new URL('../..', import.meta.url).pathname;
const RECORDER = join(root, 'scripts/load-recorder.mjs');
/** Packages of the optional subsystems: none may load before its subsystem is used. */
const OPTIONAL = [
  '@anthropic-ai/sdk',
  'openai',
  '@modelcontextprotocol/sdk',
  '@aws-sdk/client-s3',
  '@aws-sdk/s3-request-presigner',
  'webdav',
  'basic-ftp',
  'ssh2',
  'nodemailer',
  'openid-client',
  'pg',
  'quickjs-emscripten',
  'markdown-it',
  'qrcode',
  '@simplewebauthn/server',
  'yaml',
  'sharp',
];
/** The packages (by name) among the module files recorded in `file`. */
function packagesIn(file: string): Set<string> {
  const out = new Set<string>();
  if (!existsSync(file)) return out;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(line);
    if (m) out.add(m[1]);
  }
  return out;
}
const loaded = (file: string, names: string[]) => names.filter((n) => packagesIn(file).has(n));

describe('optional subsystems load on first use (built service)', { timeout: 180_000 }, () => {
  const t = tempDir('filedock-lazy-');
  const record = join(t.dir, 'modules.txt');
  let srv: ChildServer;
  let api: ChildApi;
  let s3: S3rver;
  let llm: FakeLlm;

  before(async () => {
    s3 = await startS3rver();
    llm = await startFakeAnthropic({ models: ['scripted-1'] });
    ({ srv, api } = await bootSignedIn(
      join(t.dir, 'data'),
      { LOAD_RECORD_FILE: record, NODE_OPTIONS: `--import ${RECORDER}`, SERVICE_LOG_LEVEL: 'warn' },
      { built: true },
    ));
  });
  after(async () => {
    await srv?.stop();
    await s3?.close();
    await llm?.close();
    t.cleanup();
  });

  test('service version loads no optional package', () => {
    const file = join(t.dir, 'version.txt');
    const r = spawnSync(process.execPath, [join(root, 'dist/server/cli.js'), 'version'], {
      env: { ...process.env, LOAD_RECORD_FILE: file, NODE_OPTIONS: `--import ${RECORDER}` },
      encoding: 'utf8',
    });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(loaded(file, OPTIONAL), []);
    assert.ok(!packagesIn(file).has('koa'), 'the server is not loaded for `version`');
  });

  test('an idle server with no storages has loaded none of them', async () => {
    assert.equal((await api('GET', '/api/capabilities')).status, 200);
    assert.deepEqual(loaded(record, OPTIONAL), []);
  });

  test('each loads when first used', async () => {
    const st = await api('POST', '/api/admin/storages', { name: 'Bucket', driver: 's3', config: s3rverConfig(s3, 'lazy/') });
    assert.equal(st.status, 200, JSON.stringify(st.body));
    assert.deepEqual(loaded(record, ['@aws-sdk/client-s3']), ['@aws-sdk/client-s3']);

    const set = await api('PATCH', '/api/admin/assistant', { enabled: true, provider: 'anthropic', address: llm.url, model: 'scripted-1', api_key: 'sk-lazy' });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    assert.deepEqual(loaded(record, ['@anthropic-ai/sdk']), [], 'configuring the provider loads no SDK');
    await api('POST', '/api/admin/assistant/test');
    assert.deepEqual(loaded(record, ['@anthropic-ai/sdk', 'openai']), ['@anthropic-ai/sdk'], 'the provider test loads its SDK alone');

    const key = await api('POST', '/api/auth/keys', { name: 'agent', verbs: ['files:read', 'ai.use'] });
    assert.equal(key.status, 201, JSON.stringify(key.body));
    const mcp = await fetch(`${srv.url}/api/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.body.token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    assert.equal(mcp.status, 200, await mcp.text());
    assert.deepEqual(loaded(record, ['@modelcontextprotocol/sdk']), ['@modelcontextprotocol/sdk']);

    const ssh = await api('POST', '/api/auth/ssh-keys', { name: 'laptop', public_key: sshKeyLine('lazy@test') });
    assert.equal(ssh.status, 201, JSON.stringify(ssh.body));
    assert.deepEqual(loaded(record, ['ssh2']), ['ssh2']);
    assert.deepEqual(loaded(record, ['nodemailer', 'pg', 'openid-client', 'webdav', 'basic-ftp', 'sharp']), [], 'unused subsystems stay unloaded');

    // A picture on a new storage: its sync dispatches the thumbnail, whose generator loads sharp.
    const pictures = join(t.dir, 'pictures');
    mkdirSync(pictures);
    writeFileSync(
      join(pictures, 'red.png'),
      await sharp({ create: { width: 64, height: 48, channels: 3, background: '#c00' } })
        .png()
        .toBuffer(),
    );
    await addLocalStorages(api, { Pictures: pictures });
    for (let i = 0; i < 300 && !loaded(record, ['sharp']).length; i++) await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(loaded(record, ['sharp']), ['sharp'], 'the first thumbnail loads sharp');
  });
});
