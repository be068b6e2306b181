/**
 * A catalogue of 10,000 entries (issue 33, "What it must show"; docs/app-store.md,
 * "Routes"): a signed index of that size served on loopback and connected to a
 * real server; the catalogue pages through every entry exactly once, in the
 * index's order, and its filters (search, kind, category, updates) count and
 * page correctly at that size. The time a browse takes is bench/app-store.ts's
 * (docs/benchmarks.md), not asserted here: the machine is shared.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server';
import { serveBigStore, type BigStore } from '../helpers/big-store';

const N = 10_000;

describe('a catalogue of 10,000 entries', () => {
  let s: TestServer;
  let admin: string;
  let store: BigStore;
  const browse = async (query: string) => {
    const r = await s.api('GET', `/api/admin/app-store/catalogue${query}`, { token: admin });
    assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 500));
    return r.body as { total: number; entries: Array<{ id: string; kind: string; latest: { version: string } | null; versions: unknown[] }> };
  };

  before(async () => {
    store = await serveBigStore(N);
    s = await startTestServer();
    admin = await s.login();
    const r = await s.api('POST', '/api/admin/app-store/stores', { token: admin, body: { url: store.url, public_key_pem: store.publicKeyPem } });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(r.body.entries, N);
  });
  after(async () => {
    await s?.close();
    store?.server.close();
  });

  test('the default page is the first 100, each entry whole; a page past the end is empty; limit is bounded to 1000', async () => {
    const first = await browse('');
    assert.equal(first.total, N);
    assert.deepEqual(
      first.entries.map((e) => e.id),
      Array.from({ length: 100 }, (_, i) => `app-${i}`),
    );
    assert.deepEqual([first.entries[1].latest?.version, first.entries[1].versions.length], ['1.1.0', 2]);
    const last = await browse('?offset=9950');
    assert.deepEqual([last.total, last.entries.length, last.entries.at(-1)?.id], [N, 50, 'app-9999']);
    assert.deepEqual((await browse(`?offset=${N}`)).entries, []);
    const over = await s.api('GET', '/api/admin/app-store/catalogue?limit=1001', { token: admin });
    assert.deepEqual([over.status, over.body.error], [400, 'validation_failed']);
  });

  test('pages of 1000 give every entry exactly once, in order', async () => {
    const ids: string[] = [];
    for (let offset = 0; offset < N; offset += 1000) {
      const page = await browse(`?limit=1000&offset=${offset}`);
      assert.equal(page.total, N);
      ids.push(...page.entries.map((e) => e.id));
    }
    assert.equal(ids.length, N);
    assert.equal(new Set(ids).size, N);
    assert.deepEqual(
      ids,
      Array.from({ length: N }, (_, i) => `app-${i}`),
    );
  });

  test('filters count and page at this size: a search, a kind, a category, updates', async () => {
    // "app 999" names App 999 and App 9990–9999.
    const found = await browse('?q=app%20999');
    assert.deepEqual([found.total, found.entries.map((e) => e.id)], [11, ['app-999', ...Array.from({ length: 10 }, (_, i) => `app-999${i}`)]]);
    const described = await browse('?q=number%204242:');
    assert.deepEqual(
      described.entries.map((e) => e.id),
      ['app-4242'],
    );
    const storage = await browse('?kind=storage&limit=20&offset=980');
    assert.deepEqual(
      [storage.total, storage.entries.length, storage.entries[0].id, storage.entries.every((e) => e.kind === 'storage')],
      [1000, 20, 'app-9800', true],
    );
    const apps = await browse('?kind=app&offset=8999');
    assert.deepEqual([apps.total, apps.entries.map((e) => e.id)], [9000, ['app-9999']]);
    const filed = await browse('?category=storage&limit=1');
    assert.deepEqual([filed.total, filed.entries[0].id], [1000, 'app-0']);
    // Nothing is installed: no entry has an update.
    assert.equal((await browse('?updates=true&limit=1')).total, 0);
    assert.equal((await browse('?q=no-such-entry')).total, 0);
  });
});
