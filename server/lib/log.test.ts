import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createLogger, scrub } from './log';

/** A logger whose JSON lines land in an array. */
function capture(level: Parameters<typeof createLogger>[0]) {
  const lines: Array<Record<string, any>> = [];
  const log = createLogger(level, { write: (s: string) => void lines.push(JSON.parse(s)) });
  return { log, lines };
}

test('JSON lines with time, level and message; the level filters', () => {
  const { log, lines } = capture('info');
  log.debug('hidden');
  log.info('started on port 5212');
  log.warn('disk almost full', new Error('ENOSPC'));
  assert.equal(lines.length, 2);
  assert.equal(lines[0].level, 'info');
  assert.equal(lines[0].msg, 'started on port 5212');
  assert.match(lines[0].time, /^\d{4}-\d\d-\d\dT/);
  assert.equal(lines[1].err.message, 'ENOSPC');
  assert.match(lines[1].err.stack, /log\.test\.ts/);
});

test('secrets are redacted from detail objects, errors and sentences', () => {
  const { log, lines } = capture('debug');
  log.warn('storage probe', {
    password: 'hunter2',
    config: { secret_access_key: 'AKIAXX', host: 'nas' },
    headers: { authorization: 'Bearer abc.def', cookie: 'service_session=xyz' },
    deep: { a: { token: 't0k' } },
  });
  log.error('login via https://u:pw@host failed', Object.assign(new Error('GET /api?token=s3cr3t failed'), { password: 'p' }));
  log.info('Bearer eyJhbGciOi.abc.def used; api_key=KEY123&x=1');
  const text = JSON.stringify(lines);
  for (const secret of ['hunter2', 'AKIAXX', 'abc.def', 'service_session=xyz', 't0k', 's3cr3t', 'eyJhbGciOi', 'KEY123', 'u:pw@'])
    assert.ok(!text.includes(secret), secret);
  assert.equal(lines[0].detail.config.host, 'nas', 'other fields stay');
  assert.equal(lines[0].detail.password, '[redacted]');
  assert.equal(lines[1].err.password, '[redacted]');
  assert.equal(scrub('password: "a b" and pin=1234'), 'password: [redacted] and pin=[redacted]');
});

test('a terminal gets pretty lines (pino-pretty, a dev dependency)', () => {
  const cmd = `${process.execPath} --import tsx -e "import('./server/lib/log.ts').then((m) => m.createLogger('info').warn('pretty please'))"`;
  const r = spawnSync('script', ['-qec', cmd, '/dev/null'], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /WARN.*pretty please/);
  assert.doesNotMatch(r.stdout, /"msg"/);
});

test('not a terminal: JSON lines, info on stdout and warnings on stderr, even with pino-pretty installed', () => {
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', '-e', "import('./server/lib/log.ts').then((m) => { const l = m.createLogger('info'); l.info('hello'); l.warn('careful') })"],
    { encoding: 'utf8' },
  );
  assert.equal(r.status, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout.trim()).msg, 'hello');
  assert.equal(JSON.parse(r.stderr.trim()).msg, 'careful');
});
