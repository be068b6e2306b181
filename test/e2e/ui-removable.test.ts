/**
 * An unplugged drive in Debian's Chromium against a real server and a real
 * loop-mounted ext4 image: the storage's folder shows the Offline badge, its
 * files are still listed from the catalogue, uploading is disabled; the admin
 * Storages tab shows the Offline pill with the reason. Then the drive comes
 * back and the badge goes.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { needTool } from '../helpers/tools';
import { LoopVolumes } from '../helpers/loop-volumes';
import { ADMIN, ensureRendererBuilt, launchBrowser, newPage, shot, signIn, startServer, type RunningServer, bearerApi } from './ui-harness';

const skip = needTool('chromium', 'chromium') ?? LoopVolumes.unavailable() ?? undefined;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('web UI: a storage whose drive is unplugged', { skip, timeout: 150_000 }, () => {
  let v: LoopVolumes;
  let img: string;
  let m: string;
  let srv: RunningServer;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  let token: string;
  let id: number;
  const api = bearerApi(
    () => srv.url,
    () => token,
  );
  const waitStatus = async (status: string) => {
    for (let i = 0; i < 150; i++) {
      if ((await api('GET', `/api/admin/storages/${id}`)).body.status === status) return;
      await sleep(100);
    }
    assert.fail(`storage never became ${status}`);
  };

  before(async () => {
    ensureRendererBuilt();
    v = new LoopVolumes();
    img = v.image('ui');
    m = v.folder('m');
    v.mount(img, m);
    writeFileSync(join(m, 'holiday.txt'), 'on the stick');
    srv = await startServer({ SERVICE_VOLUME_CHECK_INTERVAL: '1s' });
    const login = await fetch(`${srv.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) });
    token = ((await login.json()) as { token: string }).token;
    const made = await api('POST', '/api/admin/storages', { name: 'USB', driver: 'local', config: { path: m } });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    id = made.body.id;
    for (let i = 0; i < 150 && !(await api('GET', `/api/admin/storages/${id}`)).body.volume; i++) await sleep(100);
    browser = await launchBrowser();
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'en-US' });
    ({ page, errors } = await newPage(ctx));
    await signIn(page, srv.url);
  });
  after(async () => {
    await browser?.close();
    await srv?.stop();
    v?.cleanup();
  });

  test('the Offline badge, the files from the catalogue, no upload; the admin pill with the reason; gone when the drive is back', async () => {
    await page.goto(`${srv.url}/files/USB`);
    await page.getByText('holiday.txt').waitFor();
    assert.equal(
      await page
        .getByRole('status')
        .filter({ hasText: /^Offline$/ })
        .count(),
      0,
      'no badge while the drive is in',
    );

    v.unmount(m);
    await waitStatus('offline');
    await page.reload();
    await page
      .getByRole('status')
      .filter({ hasText: /^Offline$/ })
      .waitFor();
    await page.getByText('holiday.txt').waitFor();
    assert.equal(await page.getByLabel('Upload files', { exact: true }).isDisabled(), true, 'uploading is disabled');
    await shot(page, 'removable-offline');

    await page.goto(`${srv.url}/admin/storages`);
    const row = page.getByRole('row').filter({ hasText: 'USB' });
    await row.getByText('Offline', { exact: true }).waitFor();
    await row.getByText(/is not mounted at/).waitFor();
    await shot(page, 'removable-admin-offline');

    v.mount(img, m);
    await waitStatus('online');
    await page.goto(`${srv.url}/files/USB`);
    await page.getByText('holiday.txt').waitFor();
    assert.equal(
      await page
        .getByRole('status')
        .filter({ hasText: /^Offline$/ })
        .count(),
      0,
      'the badge is gone',
    );
    assert.deepEqual(
      errors.filter((e) => e.startsWith('pageerror')),
      [],
    );
  });
});
