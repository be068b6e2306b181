import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../test/helpers/tools';
import { DEFAULT_WINDOW, WindowStateStore, isExternalSafe, mainWindowOptions, navigationVerdict, panelWindowOptions } from './windows';

const tmp = tempDir('filedock-win-');
after(() => tmp.cleanup());

test('the main window is context-isolated, sandboxed, without Node, with the preload bridge', () => {
  const o = mainWindowOptions('/app/preload.js', { x: 10, y: 20, width: 900, height: 700, maximized: false });
  assert.equal(o.webPreferences?.contextIsolation, true);
  assert.equal(o.webPreferences?.sandbox, true);
  assert.equal(o.webPreferences?.nodeIntegration, false);
  assert.equal(o.webPreferences?.nodeIntegrationInSubFrames, false);
  assert.equal(o.webPreferences?.webviewTag, false);
  assert.equal(o.webPreferences?.webSecurity, true);
  assert.equal(o.webPreferences?.preload, '/app/preload.js');
  assert.deepEqual([o.x, o.y, o.width, o.height], [10, 20, 900, 700]);
});

test('panels share the isolation and get no bridge unless asked', () => {
  const o = panelWindowOptions('QR', 320, 380);
  assert.equal(o.webPreferences?.sandbox, true);
  assert.equal(o.webPreferences?.contextIsolation, true);
  assert.equal(o.webPreferences?.preload, undefined);
  assert.equal(o.resizable, false);
});

test('navigation stays on the server origin; other web links go to the browser; other schemes are denied', () => {
  const origin = 'http://127.0.0.1:5212';
  assert.equal(navigationVerdict('http://127.0.0.1:5212/files/Filedock', origin), 'allow');
  assert.equal(navigationVerdict('http://127.0.0.1:5213/', origin), 'external', 'another port is another origin');
  assert.equal(navigationVerdict('http://localhost:5212/', origin), 'external', 'another host name is another origin');
  assert.equal(navigationVerdict('https://127.0.0.1:5212/', origin), 'external', 'another scheme is another origin');
  assert.equal(navigationVerdict('https://example.org/docs', origin), 'external');
  assert.equal(navigationVerdict('mailto:a@b.c', origin), 'external');
  for (const bad of ['file:///etc/passwd', 'javascript:alert(1)', 'data:text/html,<b>x', 'smb://host/share', 'not a url'])
    assert.equal(navigationVerdict(bad, origin), 'deny', bad);
  assert.equal(isExternalSafe('https://example.org'), true);
  assert.equal(isExternalSafe('file:///tmp/x'), false);
});

test('window state round-trips and is dropped when off every display', () => {
  const store = new WindowStateStore(join(tmp.dir, 'a', 'window-state.json'));
  const screen = [{ x: 0, y: 0, width: 1920, height: 1080 }];
  assert.deepEqual(store.load(screen), DEFAULT_WINDOW);
  store.save({ x: 100, y: 50, width: 1000, height: 700, maximized: true });
  assert.deepEqual(store.load(screen), { x: 100, y: 50, width: 1000, height: 700, maximized: true });
  // The second monitor it sat on is gone: keep the size, let the OS place it.
  store.save({ x: 2500, y: 100, width: 1000, height: 700, maximized: false });
  assert.deepEqual(store.load(screen), { width: 1000, height: 700, maximized: false });
  assert.deepEqual(store.load([...screen, { x: 1920, y: 0, width: 1920, height: 1080 }]).x, 2500);
});

test('a broken or tiny saved state falls back to usable values', () => {
  const path = join(tmp.dir, 'b.json');
  writeFileSync(path, '{oops');
  const store = new WindowStateStore(path);
  assert.deepEqual(store.load([]), DEFAULT_WINDOW);
  writeFileSync(path, JSON.stringify({ width: 10, height: 10, maximized: 'yes' }));
  assert.deepEqual(store.load([]), { width: 480, height: 360, maximized: false });
});
