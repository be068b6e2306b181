import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { click, move, emptySelection, selectAll, toggleFocus, prune, ordered } from './selection';

const keys = ['a', 'b', 'c', 'd', 'e'];
const sel = (s: { selected: ReadonlySet<string> }) => [...s.selected].sort();

describe('selection model', () => {
  test('plain click selects one; ctrl toggles; shift extends from the anchor', () => {
    let s = click(emptySelection, keys, 'b');
    assert.deepEqual(sel(s), ['b']);
    s = click(s, keys, 'd', { toggle: true });
    assert.deepEqual(sel(s), ['b', 'd']);
    s = click(s, keys, 'b', { toggle: true });
    assert.deepEqual(sel(s), ['d']);
    // The last ctrl-click ('b') is the anchor.
    s = click(s, keys, 'd', { shift: true });
    assert.deepEqual(sel(s), ['b', 'c', 'd']);
    // A new shift-click re-ranges from the same anchor instead of adding.
    s = click(s, keys, 'a', { shift: true });
    assert.deepEqual(sel(s), ['a', 'b']);
    s = click(click(s, keys, 'e', { toggle: true }), keys, 'd', { shift: true, toggle: true });
    assert.deepEqual(sel(s), ['a', 'b', 'd', 'e']);
  });

  test('arrows move focus and selection; shift+arrows extend; ctrl+arrows move focus only; space toggles', () => {
    let s = move(emptySelection, keys, 1);
    assert.equal(s.focus, 'a');
    s = move(s, keys, 1, { shift: true });
    s = move(s, keys, 1, { shift: true });
    assert.deepEqual(sel(s), ['a', 'b', 'c']);
    s = move(s, keys, -1, { shift: true });
    assert.deepEqual(sel(s), ['a', 'b']);
    s = move(s, keys, 2, { keep: true });
    assert.equal(s.focus, 'd');
    assert.deepEqual(sel(s), ['a', 'b']);
    s = toggleFocus(s);
    assert.deepEqual(sel(s), ['a', 'b', 'd']);
    s = move(s, keys, Infinity);
    assert.deepEqual(sel(s), ['e']);
    s = move(s, keys, -Infinity);
    assert.equal(s.focus, 'a');
    assert.equal(move(emptySelection, keys, -1).focus, 'e');
    assert.equal(move(emptySelection, keys, Infinity).focus, 'e');
    assert.equal(move(emptySelection, keys, -Infinity).focus, 'a');
    assert.equal(move(emptySelection, [], 1), emptySelection);
  });

  test('select all, prune after the list changed, ordered output', () => {
    const all = selectAll(keys, emptySelection);
    assert.equal(all.selected.size, 5);
    const p = prune(all, ['a', 'c', 'e']);
    assert.deepEqual(sel(p), ['a', 'c', 'e']);
    assert.equal(prune(p, ['a', 'c', 'e', 'x']), p, 'unchanged state keeps its identity');
    assert.equal(
      prune(
        click(emptySelection, keys, 'b'),
        keys.filter((k) => k !== 'b'),
      ).focus,
      null,
    );
    assert.deepEqual(ordered(click(click(emptySelection, keys, 'e'), keys, 'a', { toggle: true }), keys), ['a', 'e']);
  });
});
