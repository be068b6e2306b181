import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../test/helpers/tools';
import { fakeElectron, type FakeElectron } from './fixtures/fake-electron';
import { nodeFork } from './fork';
import { startShell } from './shell';
import type { ForkServer } from './types';

const appRoot = fileURLToPath(new URL('..', import.meta.url));
// The app forks the bundled server (dist/server/cli.js, `npm run build`); so does this test, through Node's fork.
const serverBundle = join(appRoot, 'dist/server/cli.js');
const forkServer = nodeFork(serverBundle);
const tmp = tempDir('filedock-shell-');
after(() => tmp.cleanup());

/** Polls `ok` every 50 ms for up to `ms`; the bound is generous, the wait ends as soon as it holds. */
async function until(what: string, ok: () => boolean, ms = 30_000): Promise<void> {
  for (const end = Date.now() + ms; Date.now() < end; ) {
    if (ok()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for: ${what}`);
}

/** The shell on the stand-in Electron, its server on loopback with an OS-chosen port; the fork records what the host sends. */
async function shellOnFake(): Promise<{ fake: FakeElectron; userData: string; home: string; pids: number[] }> {
  assert.ok(existsSync(serverBundle), `${serverBundle} is missing: run \`npm run build\` first`);
  const userData = join(tmp.dir, 'user-data');
  const home = join(tmp.dir, 'home');
  mkdirSync(userData, { recursive: true });
  mkdirSync(home, { recursive: true });
  // Loopback only and port 0: the defaults (LAN on, port 5212) are not for a test machine.
  writeFileSync(
    join(userData, 'desktop-settings.json'),
    JSON.stringify({ version: 3, port: 0, lanAccess: false, startAtLogin: false, dataDir: null, publicUrl: '', publicPort: 5213, advertise: false }),
  );
  const fake = fakeElectron({ appRoot, userData, home });
  const pids: number[] = [];
  const fork: ForkServer = (env) => {
    const child = forkServer(env);
    pids.push(child.pid!);
    child.onExit((code) => fake.note('child.exit', code));
    return { ...child, send: (m) => (fake.note('child.send', m.type), child.send(m)) };
  };
  await startShell({ electron: fake.api, autoUpdater: fake.autoUpdater, mdns: () => assert.fail('mDNS is off in this test'), fork: () => fork });
  return { fake, userData, home, pids };
}

const origin = (fake: FakeElectron) => new URL(fake.windows[0].urls[0]).origin;
const count = (fake: FakeElectron, what: string) => fake.calls.filter((c) => c.what === what).length;

/** Sends a multipart upload of `size` bytes in two halves; `second()` sends the rest and resolves with the status. */
function halfUpload(url: string, token: string, folder: string, name: string, size: number) {
  const boundary = 'shell-test-boundary';
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="path"\r\n\r\n${folder}\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const body = Buffer.alloc(size, 'u');
  const req = request(`${url}/api/files/upload`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': `multipart/form-data; boundary=${boundary}`,
      'content-length': String(head.length + size + tail.length),
    },
  });
  const status = new Promise<number>((resolve, reject) => {
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
  });
  req.write(Buffer.concat([head, body.subarray(0, size / 2)]));
  return { second: () => (req.end(Buffer.concat([body.subarray(size / 2), tail])), status) };
}

test('the shell under a stand-in Electron: tray menu and its actions, window close keeps the app, quit drains the server and the upload before exit', {
  timeout: 120_000,
}, async () => {
  const { fake, userData, home, pids } = await shellOnFake();

  // First run: the server is up, a window opened signed in, the tray shows the running state.
  assert.equal(fake.windows.length, 1);
  const [win] = fake.windows;
  assert.equal((win.options.webPreferences as { preload: string }).preload, join(appRoot, 'dist/electron/preload.js'));
  assert.equal((win.options.webPreferences as { contextIsolation: boolean }).contextIsolation, true);
  const base = origin(fake);
  assert.match(base, /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.equal(win.urls[0], `${base}/`);
  const token = win.cookies.find((c) => c.name === 'service_session')?.value;
  assert.ok(token, 'the window got the session cookie');
  assert.ok(win.visible);
  assert.equal((await fetch(`${base}/api/auth/me`, { headers: { authorization: `Bearer ${token}` } })).status, 200);
  await until('tray shows running', () => fake.tray?.image === join(appRoot, 'resources/tray-running.png'));
  const labels = fake.labels();
  for (const l of [
    'Filedock is running',
    'This computer only (LAN access off)',
    'Open Filedock',
    'Open in browser',
    'Pause background work',
    'Open data folder',
    'Open logs',
    'Quit Filedock',
  ])
    assert.ok(labels.includes(l), `menu has "${l}": ${JSON.stringify(labels)}`);
  assert.equal(fake.tray?.tooltip, 'Filedock is running');

  // Open in browser: the default browser gets the server's loopback address.
  fake.click('Open in browser');
  await until('openExternal', () => count(fake, 'shell.openExternal') === 1);
  assert.deepEqual(fake.calls.find((c) => c.what === 'shell.openExternal')?.args, [`${base}/`]);

  // Pause: remembered by the host, shown checked, and the status line says so; again resumes.
  fake.click('Pause background work');
  await until('paused', () => fake.tray!.menu.find((e) => e.label === 'Pause background work')?.checked === true);
  assert.ok(fake.labels().includes('Filedock is running (background work paused)'));
  assert.ok(
    fake.calls.some((c) => c.what === 'child.send' && c.args[0] === 'pause'),
    'the server was told',
  );
  fake.click('Pause background work');
  await until('resumed', () => fake.tray!.menu.find((e) => e.label === 'Pause background work')?.checked === false);

  // Closing the window keeps the app and the server: a tray app lives on with no window.
  win.userClose();
  assert.equal(count(fake, 'app.quit') + count(fake, 'app.exit'), 0);
  assert.equal(JSON.parse(readFileSync(join(userData, 'window-state.json'), 'utf8')).width, 900, 'bounds saved on close');
  assert.equal((await fetch(`${base}/api/auth/me`, { headers: { authorization: `Bearer ${token}` } })).status, 200, 'the server still serves');
  // Open Filedock: a new window, signed in with this machine's device key (not the first-run secret again).
  fake.click('Open Filedock');
  await until('second window loaded', () => fake.windows[1]?.urls.length === 1);
  const second = fake.windows[1];
  assert.equal(second.urls[0], `${base}/`);
  const again = second.cookies.find((c) => c.name === 'service_session')?.value;
  assert.ok(again && again !== token, 'a fresh session from the device key');
  assert.ok(existsSync(join(userData, 'first-run-done')));

  // Quit while an upload is in flight: the server is asked to drain, the upload completes, the child exits, then the app exits.
  const upload = halfUpload(base, token, '/Filedock', 'in-flight.bin', 4 * 1024 * 1024);
  // The server reports the transfer; the tray says quitting will wait for it.
  await until('the upload counted as a transfer', () => fake.labels().includes('Quit (waits for transfers)'));
  assert.equal(fake.tray?.image, join(appRoot, 'resources/tray-busy.png'));
  fake.click('Quit');
  await until('drain sent', () => fake.calls.some((c) => c.what === 'child.send' && c.args[0] === 'drain'));
  await until('tray shows stopping', () => fake.labels()[0] === 'Filedock is stopping…');
  assert.equal(count(fake, 'app.exit'), 0, 'no exit while the server drains');
  assert.equal(await upload.second(), 200, 'the upload in flight finished during the drain');
  await until('app exited', () => count(fake, 'app.exit') === 1);
  const order = fake.calls.map((c) => c.what).filter((w) => ['child.exit', 'app.exit'].includes(w));
  assert.deepEqual(order, ['child.exit', 'app.exit'], 'the server process ended before the app exit');
  assert.deepEqual(fake.calls.find((c) => c.what === 'app.exit')?.args, [0]);
  assert.equal(readFileSync(join(home, 'Filedock', 'in-flight.bin')).length, 4 * 1024 * 1024);
  assert.throws(() => process.kill(pids[0], 0), 'the server process is gone');
  // A second quit (the OS asking again) does not exit twice.
  fake.api.app.emit('before-quit', { preventDefault: () => undefined });
  await new Promise((r) => setImmediate(r));
  assert.equal(count(fake, 'app.exit'), 1);
});
