// Over 60 s in CI (test-timings.json; issue 37): awscli (a Python start per command) syncs a 1,000-file tree both ways, uploads 200 MiB in parts.
/**
 * The S3 gateway with the real awscli: ls, cp up and down, sync both ways of
 * a 1,000-file tree, a 200 MiB multipart upload, a presigned GET fetched by
 * curl, rm; every write lands in the storage through the write gate.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { needTool } from '../helpers/tools';
import { aws, makeTree, run, startS3Env, type S3Env } from './s3-setup';

const skip = needTool('aws', 'awscli') ?? needTool('curl', 'curl');

/** Every file below `dir`, relative, sorted. */
function files(dir: string, base = ''): string[] {
  const out: string[] = [];
  for (const n of readdirSync(join(dir, base))) {
    const rel = base ? `${base}/${n}` : n;
    if (n.startsWith('.')) continue;
    if (statSync(join(dir, rel)).isDirectory()) out.push(...files(dir, rel));
    else out.push(rel);
  }
  return out.sort();
}

describe('S3 gateway with awscli', { skip: skip ?? undefined }, () => {
  let e: S3Env;
  before(async () => {
    e = await startS3Env();
  });
  after(async () => {
    await e?.close();
  });

  test('ls lists the storages as buckets; cp up and down; rm', async () => {
    const ls = await aws(e, ['s3', 'ls']);
    assert.equal(ls.code, 0, ls.stderr);
    assert.match(ls.stdout, /\bBox\n/);
    const events: any[] = [];
    e.s.server.bus.on('file.uploaded', (x) => void events.push(x));
    writeFileSync(join(e.work, 'hello.txt'), 'hello from awscli');
    const up = await aws(e, ['s3', 'cp', join(e.work, 'hello.txt'), 's3://Box/docs/hello.txt']);
    assert.equal(up.code, 0, up.stderr);
    assert.equal(readFileSync(join(e.root, 'docs/hello.txt'), 'utf8'), 'hello from awscli');
    const down = await aws(e, ['s3', 'cp', 's3://Box/docs/hello.txt', join(e.work, 'back.txt')]);
    assert.equal(down.code, 0, down.stderr);
    assert.equal(readFileSync(join(e.work, 'back.txt'), 'utf8'), 'hello from awscli');
    const list = await aws(e, ['s3', 'ls', 's3://Box/docs/']);
    assert.match(list.stdout, /17 hello\.txt/);
    const rm = await aws(e, ['s3', 'rm', 's3://Box/docs/hello.txt']);
    assert.equal(rm.code, 0, rm.stderr);
    assert.equal(existsSync(join(e.root, 'docs/hello.txt')), false);
    assert.equal(events.length, 1, 'one upload announced');
    assert.equal(events[0].meta.origin, 's3', 'through the write gate, as the S3 gateway');
  });

  test('sync of a 1,000-file tree up, then down into an empty folder: identical', async () => {
    const src = join(e.work, 'tree');
    makeTree(src, 1000);
    const up = await aws(e, ['s3', 'sync', src, 's3://Box/tree']);
    assert.equal(up.code, 0, up.stderr);
    assert.deepEqual(files(join(e.root, 'tree')), files(src));
    const again = await aws(e, ['s3', 'sync', src, 's3://Box/tree']);
    assert.equal(again.stdout.trim(), '', 'a second sync has nothing to do');
    const dst = join(e.work, 'tree-back');
    const down = await aws(e, ['s3', 'sync', 's3://Box/tree', dst]);
    assert.equal(down.code, 0, down.stderr);
    const got = files(dst);
    assert.equal(got.length, 1000);
    assert.deepEqual(got, files(src));
    for (const f of got.filter((_, i) => i % 97 === 0)) assert.equal(readFileSync(join(dst, f), 'utf8'), readFileSync(join(src, f), 'utf8'));
    // An empty folder made over S3 is a `key/` marker; a sync down still succeeds.
    const mk = await aws(e, ['s3api', 'put-object', '--bucket', 'Box', '--key', 'tree/emptydir/']);
    assert.equal(mk.code, 0, mk.stderr);
    assert.ok(statSync(join(e.root, 'tree/emptydir')).isDirectory());
    const again2 = await aws(e, ['s3', 'sync', 's3://Box/tree', dst]);
    assert.equal(again2.code, 0, again2.stderr + again2.stdout);
    assert.equal(again2.stdout.trim(), '', 'nothing to download: the marker is not taken for a file');
    assert.equal(existsSync(join(dst, 'emptydir')) && statSync(join(dst, 'emptydir')).isFile(), false);
  });

  test('a 200 MiB upload goes in parts and arrives whole; a presigned GET works with curl', async () => {
    const big = join(e.work, 'big.bin');
    const fh = await open(big, 'w');
    const block = Buffer.alloc(1024 * 1024);
    const hash = createHash('md5');
    for (let i = 0; i < 200; i++) {
      block.fill(i % 251);
      block.writeUInt32BE(i, 0);
      hash.update(block);
      await fh.write(block);
    }
    await fh.close();
    const up = await aws(e, ['s3', 'cp', big, 's3://Box/big.bin']);
    assert.equal(up.code, 0, up.stderr);
    assert.equal(
      createHash('md5')
        .update(readFileSync(join(e.root, 'big.bin')))
        .digest('hex'),
      hash.digest('hex'),
    );
    const head = await aws(e, ['s3api', 'head-object', '--bucket', 'Box', '--key', 'big.bin']);
    assert.equal(JSON.parse(head.stdout).ContentLength, 200 * 1024 * 1024);
    assert.deepEqual(readdirSync(join(e.s.dataDir, 'staging', 's3')), [], 'the parts were cleaned up');

    mkdirSync(join(e.root, 'pub'));
    writeFileSync(join(e.root, 'pub/note.txt'), 'presigned bytes');
    await new Promise((r) => setTimeout(r, 300));
    const url = (await aws(e, ['s3', 'presign', 's3://Box/pub/note.txt', '--expires-in', '60'])).stdout.trim();
    const got = await run('curl', ['-sS', '-f', url]);
    assert.equal(got.stdout, 'presigned bytes', got.stderr);
    const tampered = await run('curl', ['-sS', '-o', '/dev/null', '-w', '%{http_code}', url.replace('note.txt', 'other.txt')]);
    assert.equal(tampered.stdout, '403', 'the signature covers the key');
  });
});
