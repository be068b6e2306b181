import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DeadProps } from './props.repo';
import { DEFAULT_TENANT, type TenantScope } from '../../db';
import { openTestDb, testStorage } from '../../../test/helpers/test-database';

const NS = 'urn:example';
const set = (name: string, value: string) => ({ ns: NS, name, value });

test('dead properties: patch, children, copy, move and drop as units of work, on this run’s database', async () => {
  const { db, close } = await openTestDb();
  try {
    const s = await testStorage(db);
    const at = (rel: string) => ({ storage_id: s, rel, ...DEFAULT_TENANT });
    const props = new DeadProps(db);
    const names = async (rel: string) => (await props.of(at(rel))).map((p) => `${p.name}=${p.value}`).sort();

    await props.patch(at('a'), [set('colour', '<c>red</c>'), set('size', '1')]);
    await props.patch(at('a/x.txt'), [set('colour', 'blue')]);
    await props.patch(at('a_b/y.txt'), [set('colour', 'green')]); // `_` is a LIKE wildcard: must not count as below `a`
    await props.patch(at('a'), [{ ns: NS, name: 'size', value: null }, set('colour', 'black')]);
    assert.deepEqual(await names('a'), ['colour=black'], 'a set replaces, a null removes, in one patch');
    assert.deepEqual([...(await props.children(at('a'))).keys()], ['a/x.txt']);

    await props.patch(at('b'), [set('old', 'gone')]);
    await props.transfer(at('a'), at('b'), false);
    assert.deepEqual(await names('b'), ['colour=black'], 'a copy replaces what the target had');
    assert.deepEqual(await names('b/x.txt'), ['colour=blue']);
    assert.deepEqual(await names('a/x.txt'), ['colour=blue'], 'a copy keeps the source');

    await props.transfer(at('a'), at('c/d'), true);
    assert.deepEqual(await names('c/d/x.txt'), ['colour=blue']);
    assert.deepEqual([...(await props.children(at('c/d'))).keys()], ['c/d/x.txt'], 'moved rows get their new folder');
    assert.deepEqual(await names('a'), [], 'a move leaves nothing behind');
    assert.deepEqual(await names('a_b/y.txt'), ['colour=green'], 'a sibling whose name matches the wildcard is untouched');

    await props.drop(at('b'));
    assert.deepEqual([await names('b'), await names('b/x.txt')], [[], []]);
    assert.deepEqual(await names('a_b/y.txt'), ['colour=green']);
  } finally {
    await close();
  }
});

test('racing patches and a move: every unit is whole, no row is lost or doubled', async () => {
  const { db, close } = await openTestDb();
  try {
    const s = await testStorage(db);
    const at = (rel: string) => ({ storage_id: s, rel, ...DEFAULT_TENANT });
    const props = new DeadProps(db);
    await props.patch(at('src/f.txt'), [set('keep', 'me')]);
    // 20 writers of the same two properties at once: each patch writes both or neither.
    await Promise.all(Array.from({ length: 20 }, (_, i) => props.patch(at('doc'), [set('one', String(i)), set('two', String(i))])));
    const rows = await props.of(at('doc'));
    assert.equal(rows.length, 2, 'one row per property');
    assert.equal(rows[0].value, rows[1].value, 'both values from the same patch');
    // A move racing a copy of the same folder: the copy sees the rows before or after the move, never half.
    await Promise.all([props.transfer(at('src'), at('moved'), true), props.transfer(at('src'), at('copied'), false)]);
    const moved = (await props.of(at('moved/f.txt'))).length;
    const copied = (await props.of(at('copied/f.txt'))).length;
    assert.equal(moved, 1);
    assert.ok(copied === 0 || copied === 1);
    assert.equal((await props.of(at('src/f.txt'))).length, 0);
  } finally {
    await close();
  }
});

test('tenants: another tenant’s properties are neither read, listed, replaced, copied, moved nor dropped', async () => {
  const { db, close } = await openTestDb();
  try {
    const T2: TenantScope = { tenant_id: 2 };
    const s1 = await testStorage(db, 'Same');
    const s2 = await testStorage(db, 'Same', T2);
    const props = new DeadProps(db);
    const mine = (rel: string) => ({ storage_id: s1, rel, ...DEFAULT_TENANT });
    const theirs = (rel: string) => ({ storage_id: s2, rel, ...T2 });
    // Tenant 1 naming tenant 2's storage by its id.
    const guessed = (rel: string) => ({ storage_id: s2, rel, ...DEFAULT_TENANT });
    await props.patch(mine('doc'), [set('colour', 'red')]);
    await props.patch(theirs('doc'), [set('colour', 'blue')]);
    await props.patch(theirs('dir/x'), [set('colour', 'green')]);
    const names = async (p: ReturnType<typeof mine>) => (await props.of(p)).map((r) => `${r.name}=${r.value}`);
    assert.deepEqual(await names(mine('doc')), ['colour=red']);
    assert.deepEqual(await names(theirs('doc')), ['colour=blue']);
    assert.deepEqual(await names(guessed('doc')), [], 'not read');
    assert.equal((await props.children(guessed('dir'))).size, 0, 'not listed');
    await props.patch(guessed('doc'), [set('colour', 'stolen')]);
    await props.patch(guessed('doc'), [{ ns: NS, name: 'colour', value: null }]);
    assert.deepEqual(await names(theirs('doc')), ['colour=blue'], 'neither replaced nor removed');
    await props.transfer(guessed('dir'), mine('copy'), false);
    assert.deepEqual(await names(mine('copy/x')), [], 'not copied out');
    await props.transfer(guessed('dir'), mine('moved'), true);
    await props.drop(guessed(''));
    assert.deepEqual(await names(theirs('dir/x')), ['colour=green'], 'neither moved nor dropped');
    assert.deepEqual(await names(theirs('doc')), ['colour=blue']);
  } finally {
    await close();
  }
});
