import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { PassThrough, Readable, Writable } from 'node:stream';
import { pipeFrom, takeBytes } from './streams';

const settle = () => new Promise((r) => setTimeout(r, 50));

test("pipeFrom: the source's own failure is reported and destroys the destination", async () => {
  const source = new PassThrough();
  const dest = new PassThrough();
  dest.resume();
  const seen: Error[] = [];
  pipeFrom(source, dest, (e) => seen.push(e));
  source.destroy(new Error('client gone'));
  await settle();
  assert.deepEqual(
    seen.map((e) => e.message),
    ['client gone'],
  );
  assert.equal(dest.destroyed, true);
});

test('pipeFrom: a failing destination destroys the source without blaming it', async () => {
  const source = new PassThrough();
  const dest = new Writable({ write: (_c, _e, cb) => cb(new Error('disk full')) });
  const seen: Error[] = [];
  pipeFrom(source, dest, (e) => seen.push(e));
  source.write('x');
  await settle();
  assert.deepEqual(seen, []);
  assert.equal(source.destroyed, true);
});

test("pipeFrom: a child that stops reading (EPIPE) is not the source's failure, and nothing is left unhandled", async () => {
  const child = spawn('sh', ['-c', 'exit 0'], { stdio: ['pipe', 'ignore', 'ignore'] });
  const source = Readable.from(
    (function* () {
      for (let i = 0; i < 1000; i++) yield Buffer.alloc(64 * 1024);
    })(),
  );
  const seen: Error[] = [];
  pipeFrom(source, child.stdin, (e) => seen.push(e));
  await once(child, 'close');
  await settle();
  assert.deepEqual(seen, []);
});

test('takeBytes: the slice only, and the body is destroyed once it is complete', async () => {
  let produced = 0;
  const body = new Readable({
    read() {
      produced++;
      this.push(Buffer.alloc(64 * 1024, produced % 256));
    },
  });
  const chunks: Buffer[] = [];
  for await (const c of takeBytes(body, 3, 100_000)) chunks.push(c as Buffer);
  const got = Buffer.concat(chunks);
  assert.equal(got.length, 100_000);
  assert.deepEqual([got[0], got[64 * 1024 - 4], got[64 * 1024 - 3]], [1, 1, 2]);
  await settle();
  assert.equal(body.destroyed, true);
  assert.ok(produced < 6, `the surplus is not read (${produced} chunks)`);
  const all: Buffer[] = [];
  for await (const c of takeBytes(Readable.from([Buffer.from('abc'), Buffer.from('def')]), 2, Infinity)) all.push(c as Buffer);
  assert.equal(Buffer.concat(all).toString(), 'cdef');
});

test('takeBytes: an error of the body fails the slice', async () => {
  const body = new PassThrough();
  const sliced = takeBytes(body, 0, 100);
  body.write('ab');
  body.destroy(new Error('network cut'));
  await assert.rejects(async () => {
    for await (const _ of sliced) void _;
  }, /network cut/);
});
