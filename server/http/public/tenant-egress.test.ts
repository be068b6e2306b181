import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { EgressShaper } from '../../lib/egress';
import { TenantEgress } from './tenant-egress';

const A = { tenant_id: 2 };
const B = { tenant_id: 3 };
const sink = (got: { n: number }) =>
  new Writable({
    write(c: Buffer, _e, cb) {
      got.n += c.length;
      cb();
    },
  });

test('a tenant with a share is held to it only while another tenant has a public transfer running', () => {
  const shared = new EgressShaper(1_000_000);
  const egress = new TenantEgress(shared, (t) => (t.tenant_id === A.tenant_id ? 25 : null));
  const a = egress.pacer(A).sender()!;
  assert.equal(egress.rateOf(A.tenant_id), 0, 'alone: no lane of its own, the whole budget');
  const b = egress.pacer(B).sender()!;
  assert.equal(egress.rateOf(A.tenant_id), 250_000, 'another tenant runs: 25 % of the budget');
  assert.equal(egress.rateOf(B.tenant_id), 0, 'no share: the shared budget alone');
  assert.equal(shared.stats().active_streams, 2, 'both count in the shared budget');
  b.done();
  assert.equal(egress.rateOf(A.tenant_id), 0, 'alone again');
  a.done();
  b.done();
  assert.equal(shared.stats().active_streams, 0, 'done is idempotent');
});

test('a paced transfer of a tenant keeps to its share while another tenant runs, and delivers every byte', async () => {
  const shared = new EgressShaper(1_000_000);
  const egress = new TenantEgress(shared, (t) => (t.tenant_id === A.tenant_id ? 25 : null));
  const other = egress.pacer(B).sender()!;
  const got = { n: 0 };
  const t0 = Date.now();
  await pipeline(Readable.from([Buffer.alloc(100_000), Buffer.alloc(100_000)]), egress.pacer(A).pace()!, sink(got));
  const ms = Date.now() - t0;
  other.done();
  assert.equal(got.n, 200_000);
  // 200 kB at 250 kB/s with a 32 kB burst: at least 0.67 s (alone it would be 0.15 s against the whole budget).
  assert.ok(ms >= 600, `${ms} ms`);
  assert.equal(shared.stats().bytes_total, 200_000, 'the shared budget counted the bytes too');
});

test('without a budget there is no pacer', () => {
  const egress = new TenantEgress(new EgressShaper(0), () => 25);
  assert.equal(egress.pacer(A).pace(), null);
  assert.equal(egress.pacer(A).sender(), null);
});
