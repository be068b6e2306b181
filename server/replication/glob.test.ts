import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compileGlob, globProblem } from './glob';

test('replication globs: * stays in a segment, ** spans segments', () => {
  const m = (p: string, s: string) => compileGlob(p).test(s);
  assert.ok(m('Photos/*.jpg', 'Photos/a.jpg'));
  assert.ok(!m('Photos/*.jpg', 'Photos/2024/a.jpg'));
  assert.ok(m('Photos/**', 'Photos/2024/x/a.jpg'));
  assert.ok(m('**/*.tmp', 'Docs/a/b/c.tmp'));
  assert.ok(m('**/*.tmp', 'Docs/c.tmp'));
  assert.ok(m('/Docs/**/keep/*', 'Docs/keep/a'));
  assert.ok(m('Docs/**/keep/*', 'Docs/x/y/keep/a'));
  assert.ok(!m('Docs/**/keep/*', 'Docs/x/keep/a/b'));
  assert.ok(m('D?cs/a.txt', 'Docs/a.txt'));
  assert.ok(!m('Docs/a.txt', 'Docs/aXtxt'));
});

test('replication globs: invalid patterns are named', () => {
  for (const bad of ['', '  ', 'a//b', 'a/../b', 'a**/b', 'x/[ab]', 'x/{a,b}', 'a\\b']) assert.ok(globProblem(bad), `refused: ${JSON.stringify(bad)}`);
  for (const ok of ['**', '*', 'Photos/**', '/Photos/*.jpg', '**/*.tmp']) assert.equal(globProblem(ok), null, ok);
});
