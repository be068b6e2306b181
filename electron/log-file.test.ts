import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { tempDir } from '../test/helpers/tools';
import { RotatingLog } from './log-file';

const tmp = tempDir('filedock-log-');
after(() => tmp.cleanup());

test('rotates at the size bound and keeps only the newest files', () => {
  const log = new RotatingLog(join(tmp.dir, 'a', 'server.log'), { maxBytes: 100, keep: 2 });
  for (let i = 0; i < 20; i++) log.write(`line ${String(i).padStart(2, '0')} ${'x'.repeat(20)}`);
  log.close();
  assert.ok(statSync(log.path).size <= 100);
  assert.ok(existsSync(`${log.path}.1`) && existsSync(`${log.path}.2`));
  assert.equal(existsSync(`${log.path}.3`), false);
  assert.match(readFileSync(log.path, 'utf8'), /line 19/);
  assert.doesNotMatch(readFileSync(`${log.path}.2`, 'utf8'), /line 00/, 'the oldest lines were dropped');
});

test('pipe splits a stream into prefixed lines, keeping a partial last line until the end', async () => {
  const log = new RotatingLog(join(tmp.dir, 'b', 'server.log'));
  const s = new PassThrough();
  log.pipe(s, '[out] ');
  s.write('one\ntw');
  s.end('o\nthree');
  await new Promise((r) => s.on('end', r));
  log.close();
  assert.equal(readFileSync(log.path, 'utf8'), '[out] one\n[out] two\n[out] three\n');
});
