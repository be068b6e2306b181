// Over 60 s in CI (test-timings.json; issue 37): s3cmd runs per command and rclone copies and checks a 1,000-file tree both ways.
/**
 * The S3 gateway with s3cmd (put/get/ls/del, sync) and rclone (copy of a
 * 1,000-file tree both ways, `rclone check`).
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { needTool } from '../helpers/tools';
import { makeTree, rclone, s3cmd, startS3Env, type S3Env } from './s3-setup';

describe('S3 gateway with s3cmd', { skip: needTool('s3cmd', 's3cmd') ?? undefined }, () => {
  let e: S3Env;
  before(async () => {
    e = await startS3Env();
  });
  after(async () => {
    await e?.close();
  });

  test('put, ls, get, del, sync', async () => {
    writeFileSync(join(e.work, 'one.txt'), 'one by s3cmd');
    const put = await s3cmd(e, ['put', join(e.work, 'one.txt'), 's3://Box/s3cmd/one.txt']);
    assert.equal(put.code, 0, put.stderr);
    assert.equal(readFileSync(join(e.root, 's3cmd/one.txt'), 'utf8'), 'one by s3cmd');
    const ls = await s3cmd(e, ['ls', 's3://Box/s3cmd/']);
    assert.equal(ls.code, 0, ls.stderr);
    assert.match(ls.stdout, /12\s+s3:\/\/Box\/s3cmd\/one\.txt/);
    const buckets = await s3cmd(e, ['ls']);
    assert.match(buckets.stdout, /s3:\/\/Box/);
    const get = await s3cmd(e, ['get', 's3://Box/s3cmd/one.txt', join(e.work, 'one-back.txt')]);
    assert.equal(get.code, 0, get.stderr);
    assert.equal(readFileSync(join(e.work, 'one-back.txt'), 'utf8'), 'one by s3cmd');
    const del = await s3cmd(e, ['del', 's3://Box/s3cmd/one.txt']);
    assert.equal(del.code, 0, del.stderr);
    assert.equal(existsSync(join(e.root, 's3cmd/one.txt')), false);
    const src = join(e.work, 'tree');
    makeTree(src, 60);
    const up = await s3cmd(e, ['sync', `${src}/`, 's3://Box/synced/']);
    assert.equal(up.code, 0, up.stderr);
    assert.equal(readFileSync(join(e.root, 'synced/d1/e1/f1.txt'), 'utf8'), readFileSync(join(src, 'd1/e1/f1.txt'), 'utf8'));
    const down = await s3cmd(e, ['sync', 's3://Box/synced/', `${join(e.work, 'back')}/`]);
    assert.equal(down.code, 0, down.stderr);
    assert.equal(readFileSync(join(e.work, 'back/d6/e2/f20.txt'), 'utf8'), readFileSync(join(src, 'd6/e2/f20.txt'), 'utf8'));
  });
});

describe('S3 gateway with rclone', { skip: needTool('rclone', 'rclone') ?? undefined }, () => {
  let e: S3Env;
  before(async () => {
    e = await startS3Env();
  });
  after(async () => {
    await e?.close();
  });

  test('copy a 1,000-file tree up and down; rclone check finds no difference either way', async () => {
    const src = join(e.work, 'tree');
    makeTree(src, 1000);
    const up = await rclone(e, ['copy', src, 'fd:Box/rc']);
    assert.equal(up.code, 0, up.stderr);
    const check = await rclone(e, ['check', src, 'fd:Box/rc']);
    assert.equal(check.code, 0, check.stderr);
    assert.match(check.stderr, /0 differences found/);
    const back = join(e.work, 'back');
    const down = await rclone(e, ['copy', 'fd:Box/rc', back]);
    assert.equal(down.code, 0, down.stderr);
    const check2 = await rclone(e, ['check', 'fd:Box/rc', back]);
    assert.equal(check2.code, 0, check2.stderr);
    assert.match(check2.stderr, /1000 matching files/);
    const mk = await rclone(e, ['mkdir', 'fd:Box/rc/newdir']);
    assert.equal(mk.code, 0, mk.stderr);
    const lsd = await rclone(e, ['lsd', 'fd:Box/rc']);
    assert.match(lsd.stdout, /d0/);
  });
});
