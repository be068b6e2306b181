import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkName, cleanRel, parseUiPath, parseSharePath, nameIssue, isInternalPath, RESERVED_NAMES, STAGING_DIR, TEMP_PREFIX } from './paths';
import { AppError } from '../errors';

const code = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    return (e as AppError).code + (((e as AppError).params.reason as string) ? ':' + (e as AppError).params.reason : '');
  }
  return 'ok';
};

test('name rules follow the spec', () => {
  assert.equal(nameIssue('   '), 'empty');
  assert.equal(
    code(() => checkName('a/b')),
    'name_not_allowed:slash',
  );
  assert.equal(
    code(() => checkName('a\\b')),
    'name_not_allowed:backslash',
  );
  assert.equal(
    code(() => checkName('a\u0001b')),
    'name_not_allowed:control',
  );
  for (const c1 of ['\u0080', '\u0085', '\u009f', '\u007f'])
    assert.equal(
      code(() => checkName(`a${c1}b`)),
      'name_not_allowed:control',
      escape(c1),
    );
  assert.equal(checkName('a\u00a0b'), 'a\u00a0b', 'U+00A0 (no-break space) is a printable character');
  assert.equal(
    code(() => checkName('..')),
    'name_not_allowed:dots',
  );
  assert.equal(
    code(() => checkName('. .')),
    'name_not_allowed:dots',
  );
  assert.equal(
    code(() => checkName('x'.repeat(256))),
    'name_too_long',
  );
  assert.equal(
    code(() => checkName('ğ'.repeat(128))),
    'name_too_long',
    'bytes, not characters',
  );
  assert.equal(
    code(() => checkName('.service-trash')),
    'reserved_name',
  );
  assert.equal(
    code(() => checkName('.versions')),
    'reserved_name',
  );
  assert.equal(checkName('.versions', { allowReserved: true }), '.versions');
  assert.equal(checkName('résumé #1 100%.txt'), 'résumé #1 100%.txt');
  assert.equal(checkName('.hidden'), '.hidden');
});

test('paths are split, cleaned and never escape', () => {
  assert.deepEqual(parseUiPath('/'), { storage: null, rel: '' });
  assert.deepEqual(parseUiPath('/Home//a/./b/'), { storage: 'Home', rel: 'a/b' });
  assert.equal(
    code(() => parseUiPath('/Home/a/../../etc')),
    'bad_path',
  );
  assert.equal(
    code(() => parseUiPath('/../etc')),
    'bad_path',
  );
  assert.equal(
    code(() => parseUiPath('/Home/a\\..\\b')),
    'name_not_allowed:backslash',
  );
  assert.equal(
    code(() => parseUiPath('/Home/a\0b')),
    'bad_path',
  );
  assert.equal(
    code(() => parseUiPath(42)),
    'bad_path',
  );
  assert.equal(
    code(() => cleanRel('a/.service-trash/x')),
    'reserved_name',
  );
  assert.deepEqual(parseSharePath('Home://docs/a.txt'), { storage: 'Home', rel: 'docs/a.txt' });
});

test('isInternalPath: a service folder or temp file at any depth, and nothing else', () => {
  // Its fast path assumes every internal name starts with a dot.
  for (const n of [...RESERVED_NAMES, STAGING_DIR, TEMP_PREFIX]) assert.ok(n.startsWith('.'), n);
  for (const p of ['.versions', '.service-trash/a', 'a/.service-staging/b', 'a/b/.~fd-123', `a/${TEMP_PREFIX}x`]) assert.equal(isInternalPath(p), true, p);
  for (const p of ['a', 'a/b.txt', '.hidden/a', 'a/.hidden', 'a/.versionsX/b', 'a.versions']) assert.equal(isInternalPath(p), false, p);
});
