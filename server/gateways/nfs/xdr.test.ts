import { test } from 'node:test';
import assert from 'node:assert/strict';
import { XdrError, XdrReader, XdrWriter } from './xdr';
import { answer, Accept, type Program } from './rpc';
import { Handles } from './handles';
import { Nfs3, NfsError } from './errors';

test('XDR round trip: words, hypers, padded opaque and strings', () => {
  const b = new XdrWriter(4)
    .u32(7)
    .u64(2 ** 40 + 5)
    .opaque(Buffer.from('abcde'))
    .string('ü')
    .bool(true)
    .done();
  assert.equal(b.length, 4 + 8 + 4 + 8 + 4 + 4 + 4);
  const r = new XdrReader(b);
  assert.equal(r.u32(), 7);
  assert.equal(r.u64(), 2 ** 40 + 5);
  assert.equal(r.opaque(10).toString(), 'abcde');
  assert.equal(r.string(10), 'ü');
  assert.equal(r.bool(), true);
  assert.equal(r.left, 0);
});

test('malformed XDR is XdrError, never a read past the buffer or a huge allocation', () => {
  assert.throws(() => new XdrReader(Buffer.alloc(3)).u32(), XdrError);
  assert.throws(() => new XdrReader(new XdrWriter().u32(0xffffffff).done()).opaque(64), XdrError, 'a length past the maximum');
  assert.throws(() => new XdrReader(new XdrWriter().u32(10).u32(1).done()).opaque(64), XdrError, 'a length past the data');
  assert.throws(() => new XdrReader(new XdrWriter().u32(0xffffffff).u32(0).done()).u64(), XdrError, 'a hyper past 2^53');
  assert.throws(() => new XdrReader(new XdrWriter().u32(2).done()).bool(), XdrError);
});

const echo: Program = { prog: 7, vers: 3, procs: { 1: (r) => [new XdrWriter().u32(r.u32()).done()] } };
const call = (prog: number, vers: number, proc: number, rest: (w: XdrWriter) => void = () => undefined) => {
  const w = new XdrWriter().u32(42).u32(0).u32(2).u32(prog).u32(vers).u32(proc).u32(0).u32(0).u32(0).u32(0);
  rest(w);
  return w.done();
};
const statusOf = async (rec: Buffer) => {
  const out = await answer(rec, [echo], { ip: '127.0.0.1' });
  const r = new XdrReader(Buffer.concat(out!));
  r.u32();
  r.u32();
  if (r.u32() !== 0) return -1;
  r.u32();
  r.opaque(400);
  return r.u32();
};

test('RPC replies: PROG_UNAVAIL, PROG_MISMATCH, PROC_UNAVAIL, GARBAGE_ARGS, SUCCESS; a record too short to be a call gets nothing', async () => {
  assert.equal(await statusOf(call(8, 3, 1)), Accept.PROG_UNAVAIL);
  assert.equal(await statusOf(call(7, 2, 1)), Accept.PROG_MISMATCH);
  assert.equal(await statusOf(call(7, 3, 9)), Accept.PROC_UNAVAIL);
  assert.equal(await statusOf(call(7, 3, 1)), Accept.GARBAGE_ARGS, 'the argument is missing');
  assert.equal(await statusOf(call(7, 3, 1, (w) => w.u32(5))), Accept.SUCCESS);
  assert.equal(await statusOf(new XdrWriter().u32(42).u32(0).u32(3).done()), -1, 'RPC version 3 → MSG_DENIED');
  assert.equal(await answer(Buffer.alloc(2), [echo], { ip: '' }), null);
  const badCred = new XdrWriter().u32(42).u32(0).u32(2).u32(7).u32(3).u32(1).u32(1).u32(0xffff).done();
  assert.equal(await statusOf(badCred), Accept.GARBAGE_ARGS, 'a credential longer than the record');
});

test('file handles: made and read back (a checked one known by its bytes); altered, forged, another key or a wrong size → BADHANDLE', () => {
  const h = new Handles(Buffer.alloc(32, 1));
  const fh = h.make({ exportId: 3, kind: 'node', id: 123456 });
  assert.ok(fh.length <= 64);
  assert.deepEqual(h.read(fh), { exportId: 3, kind: 'node', id: 123456 });
  const bad = (b: Buffer) =>
    assert.throws(
      () => h.read(b),
      (e: unknown) => e instanceof NfsError && e.status === Nfs3.BADHANDLE,
    );
  for (let i = 0; i < fh.length; i++) {
    const x = Buffer.from(fh);
    x[i] ^= 1;
    bad(x);
  }
  bad(new Handles(Buffer.alloc(32, 2)).make({ exportId: 3, kind: 'node', id: 123456 }));
  bad(Buffer.alloc(fh.length));
  bad(fh.subarray(0, 20));
  // A handle that passed is known by its bytes afterwards (no HMAC per READ); the altered ones above never were.
  assert.equal(h.read(Buffer.from(fh)), h.read(fh), 'the same checked reference');
  assert.ok(Object.isFrozen(h.read(fh)), 'shared, so not writable');
});
