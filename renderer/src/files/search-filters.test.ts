import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chipsOf, NO_FILTERS, RECENT_MAX, recentSearches, rememberSearch, toQuery, without } from './search-filters';

const store = () => {
  const m = new Map<string, string>();
  return { getItem: (k: string) => m.get(k) ?? null, setItem: (k: string, v: string) => void m.set(k, v), m };
};

test('a kind stands for its extensions; typed extensions are cleaned; scope only below the root', () => {
  const pdf = toQuery('  invoice ', { ...NO_FILTERS, kind: 'pdf', ext: 'docx' }, '/Docs');
  assert.equal(pdf.q, 'invoice');
  assert.equal(pdf.ext, 'pdf', 'the kind wins over what was typed before it was chosen');
  assert.equal(toQuery('x', { ...NO_FILTERS, ext: ' .PDF, jpg ' }, '/').ext, 'pdf,jpg');
  assert.match(toQuery('x', { ...NO_FILTERS, kind: 'images' }, '/').ext ?? '', /^jpg,jpeg,png,/);
  assert.equal(toQuery('x', { ...NO_FILTERS, min: '1.5' }, '/').min_size, 1_572_864);
  assert.equal(toQuery('x', { ...NO_FILTERS, scope: true }, '/').path, '');
  assert.equal(toQuery('x', { ...NO_FILTERS, scope: true }, '/Docs/a').path, '/Docs/a');
  // The date taken: whole local days, both ends included.
  const taken = toQuery('x', { ...NO_FILTERS, takenFrom: '2024-07-14', takenTo: '2024-07-14' }, '/');
  assert.equal(new Date(taken.taken_from!).getTime(), new Date(2024, 6, 14).getTime());
  assert.equal(new Date(taken.taken_to!).getTime(), new Date(2024, 6, 15).getTime() - 1);
  assert.equal(toQuery('x', NO_FILTERS, '/').taken_from, '');
});

test('one chip per filter in effect; removing one leaves the others', () => {
  const f = { ...NO_FILTERS, kind: 'pdf' as const, ext: 'docx', after: '2026-01-01', scope: true };
  assert.deepEqual(
    chipsOf({ ...f, takenTo: '2024-12-31' }, '/Docs').map((c) => c.key),
    ['kind', 'after', 'takenTo', 'scope'],
  );
  assert.deepEqual(
    chipsOf(f, '/Docs').map((c) => c.key),
    ['kind', 'after', 'scope'],
    'typed extensions are not in effect while a kind is',
  );
  assert.deepEqual(chipsOf(f, '/Docs')[1].values, { date: '2026-01-01' });
  const left = without(f, 'kind');
  assert.equal(left.kind, '');
  assert.deepEqual(
    chipsOf(left, '/Docs').map((c) => c.key),
    ['ext', 'after', 'scope'],
  );
  assert.deepEqual(chipsOf(NO_FILTERS, '/'), []);
});

test('recent searches: newest first, once each whatever the case, at most eight, junk ignored', () => {
  const s = store();
  assert.deepEqual(recentSearches(s), []);
  rememberSearch('invoice', s);
  rememberSearch('garden', s);
  assert.deepEqual(rememberSearch('Invoice ', s), ['Invoice', 'garden']);
  for (let i = 0; i < 12; i++) rememberSearch(`q${i}`, s);
  assert.equal(recentSearches(s).length, RECENT_MAX);
  assert.equal(recentSearches(s)[0], 'q11');
  s.m.set('filedock.recent-searches', '{not json');
  assert.deepEqual(recentSearches(s), []);
  s.m.set('filedock.recent-searches', JSON.stringify(['a', 3, null, 'b']));
  assert.deepEqual(recentSearches(s), ['a', 'b']);
  const full = {
    getItem: () => null,
    setItem: () => {
      throw new Error('QuotaExceededError');
    },
  };
  assert.deepEqual(rememberSearch('kept', full), ['kept'], 'a full storage does not stop the search');
});
