import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

// electron-builder packs the whole app (about 8,000 files): 30-90 s on a shared 2-core machine.
test('the desktop package (all but the Electron binary) holds the app, its production packages and the feed, nothing else', { timeout: 300_000 }, () => {
  const r = spawnSync(process.execPath, ['scripts/dist-check.mjs', '--json'], { cwd: root, encoding: 'utf8' });
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
  const s = JSON.parse(r.stdout) as {
    ok: boolean;
    problems: string[];
    files: number;
    packages: number;
    asar_bytes: number;
    unpacked_bytes: number;
    pack_seconds: number;
    feed: { provider: string; channel: string };
  };
  assert.deepEqual(s.problems, []);
  assert.equal(s.feed.provider, 'generic');
  assert.equal(s.feed.channel, 'latest');
  // Guards against a rule that drops everything: the server alone needs hundreds of packages.
  assert.ok(s.packages > 200 && s.files > 1000, JSON.stringify(s));
  console.log(
    `packed ${s.files} files, ${s.packages} packages: app.asar ${(s.asar_bytes / 1e6).toFixed(1)} MB + unpacked ${(s.unpacked_bytes / 1e6).toFixed(1)} MB in ${s.pack_seconds.toFixed(0)} s`,
  );
});
