import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseQuery } from './search-query';

test('words, "phrases" and -exclusions; longest first, each once whatever its case', () => {
  assert.deepEqual(parseQuery('tax  invoice'), { all: ['invoice', 'tax'], none: [] });
  assert.deepEqual(parseQuery('"total  due in" -"at once" -draft'), { all: ['total due in'], none: ['at once', 'draft'] });
  assert.deepEqual(parseQuery('Tax tax TAX'), { all: ['Tax'], none: [] });
  // An unclosed phrase runs to the end; a lone '-' and empty quotes say nothing; other characters are literal.
  assert.deepEqual(parseQuery('report "q3 draft'), { all: ['q3 draft', 'report'], none: [] });
  assert.deepEqual(parseQuery('- "" 50% a*b'), { all: ['50%', 'a*b'], none: [] });
  assert.deepEqual(parseQuery('well-known'), { all: ['well-known'], none: [] });
  assert.deepEqual(parseQuery('   '), { all: [], none: [] });
});
