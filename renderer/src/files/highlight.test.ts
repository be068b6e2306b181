import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tokenize, isTextName } from './highlight';

const kinds = (src: string, name: string) =>
  tokenize(src, name)
    .filter((t) => t.kind !== 'plain' && t.kind !== 'punct')
    .map((t) => `${t.kind}:${t.text}`);

test('tokens always concatenate back to the input', () => {
  for (const [src, name] of [
    ['const a = "x\\"y"; // hi\n/* c */ 42', 'a.ts'],
    ['# c\nx: "v" 3', 'a.yml'],
    ['<a href="x">t<!-- c --></a>', 'a.html'],
    ["SELECT 'it''s' -- c", 'q.sql'],
    ['"unterminated', 'a.js'],
  ] as const)
    assert.equal(
      tokenize(src, name)
        .map((t) => t.text)
        .join(''),
      src,
    );
});

test('classifies comments, strings, numbers and keywords per language', () => {
  assert.deepEqual(kinds('const a = "s"; // note\nreturn 42', 'x.ts'), ['keyword:const', 'string:"s"', 'comment:// note', 'keyword:return', 'number:42']);
  assert.deepEqual(kinds('def f(): # hi', 'x.py'), ['keyword:def', 'comment:# hi']);
  assert.deepEqual(kinds('<p class="x">', 'x.html'), ['tag:<p', 'attr:class', 'string:"x"', 'tag:>']);
  assert.deepEqual(kinds('select 1', 'x.sql'), ['keyword:select', 'number:1']);
  assert.deepEqual(tokenize('plain words', 'notes.txt'), [{ kind: 'plain', text: 'plain words' }]);
});

test('text detection by extension and mime', () => {
  assert.ok(isTextName('a.md'));
  assert.ok(isTextName('x.bin', 'text/plain'));
  assert.ok(!isTextName('photo.jpg', 'image/jpeg'));
});
