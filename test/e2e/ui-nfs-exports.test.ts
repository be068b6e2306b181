/**
 * Admin → Gateways → NFS exports in Debian's Chromium against a real server
 * with the NFS gateway on: the LAN warning is always shown; an export is added
 * through the form (folder chosen in the picker), a bad CIDR is refused under
 * the clients field and nothing is stored; the stored export's libnfs mount
 * URL really lists the folder with `nfs-ls`; a connected NFS client is listed;
 * the export is edited to read-only, then deleted. The API is checked after
 * each step. A file written, renamed and removed over NFS shows in the open
 * folder view at once (realtime, no reload). Phone (390x844) and desktop screenshots go to docs/screenshots/.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { needTool } from '../helpers/tools';
import { NFS, RpcClient, dirop, mountRoot } from '../helpers/nfs-client';
import { ADMIN, bearerApi, ensureRendererBuilt, fileRow, launchBrowser, shot, signedInPage, startServer, type RunningServer } from './ui-harness';

const skip = needTool('chromium', 'chromium') ?? needTool('nfs-ls', 'libnfs-utils') ?? undefined;
const DOCS = new URL('../../docs/screenshots/', import.meta.url).pathname;

describe('web UI: NFS exports', { skip, timeout: 240_000 }, () => {
  let srv: RunningServer;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  let token: string;
  let port: number;
  let adminId: number;
  const api = bearerApi(
    () => srv.url,
    () => token,
  );
  const exportsNow = async () =>
    (await api('GET', '/api/admin/gateways/nfs/exports')).body.exports as Array<{
      id: number;
      path: string;
      clients: string;
      user_id: number;
      read_only: boolean;
    }>;
  const keep = (p: Page, name: string) =>
    shot(p, name).then((file) => {
      mkdirSync(DOCS, { recursive: true });
      copyFileSync(file, join(DOCS, `${name}.png`));
    });
  const section = () => page.getByRole('region', { name: 'NFS exports' });

  before(async () => {
    ensureRendererBuilt();
    srv = await startServer({ SERVICE_NFS_LISTEN: '127.0.0.1:0' });
    token = (
      (await (
        await fetch(`${srv.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) })
      ).json()) as { token: string }
    ).token;
    const me = (await api('GET', '/api/auth/me')).body;
    adminId = me.user?.id ?? me.id;
    assert.equal((await api('POST', '/api/files/mkdir', { path: '/home/films' })).status, 200);
    const nfs = (await api('GET', '/api/admin/gateways')).body.gateways.find((g: { protocol: string }) => g.protocol === 'nfs');
    port = Number(nfs.listen.split(':').at(-1));
    browser = await launchBrowser();
    ({ page, errors } = await signedInPage(browser, srv.url, ADMIN, { viewport: { width: 1280, height: 900 } }));
  });
  after(async () => {
    await browser?.close();
    await srv?.stop();
  });

  test('add (bad CIDR refused at the field, then stored), mount URL works, client listed, edit to read-only, delete', async () => {
    await page.goto(`${srv.url}/admin/gateways`);
    await section().waitFor();
    assert.match(await section().getByTestId('nfs-warning').innerText(), /NFSv3 has no passwords\. Anyone at an allowed address can mount/);
    await section().getByText('No export yet').waitFor();

    // Add: the folder from the picker, one bad range among the clients.
    await section().getByRole('button', { name: 'Add export' }).click();
    const form = page.getByRole('dialog', { name: 'Add export' });
    await form.getByRole('button', { name: 'Choose…' }).click();
    const picker = page.getByRole('dialog', { name: 'Storage or folder' });
    await picker.getByRole('button', { name: /home/ }).click();
    await picker.getByRole('button', { name: /films/ }).click();
    await picker.getByRole('button', { name: 'Choose this folder' }).click();
    assert.equal(await form.getByLabel('Storage or folder').inputValue(), '/home/films');
    await form.getByLabel('Allowed client addresses').fill('127.0.0.1/32, 10.0.0.0/99');
    await form.getByLabel('Account whose rights apply').selectOption(String(adminId));
    await form.getByRole('button', { name: 'Save' }).click();
    const clients = form.getByLabel('Allowed client addresses');
    await form.getByText('Not an address or CIDR range: 10.0.0.0/99').waitFor();
    assert.equal(await clients.getAttribute('aria-invalid'), 'true');
    assert.match((await clients.getAttribute('aria-describedby')) ?? '', /err/);
    assert.deepEqual(await exportsNow(), [], 'a refused export is not stored');
    await keep(page, 'ui-nfs-exports-field-error');

    await clients.fill('127.0.0.1/32, 192.168.1.0/24');
    await form.getByRole('button', { name: 'Save' }).click();
    await form.waitFor({ state: 'hidden' });
    const [e] = await exportsNow();
    assert.deepEqual(
      { path: e.path, clients: e.clients, user_id: e.user_id, read_only: e.read_only },
      { path: '/home/films', clients: '127.0.0.1/32, 192.168.1.0/24', user_id: adminId, read_only: false },
    );
    const card = section().getByTestId(`nfs-export-${e.id}`);
    assert.match(await card.innerText(), /\/home\/films\s+Read and write/);

    // The mount commands, copyable; the libnfs one really lists the folder.
    await card.getByText('Mount commands').click();
    const opts = `vers=3,tcp,port=${port},mountport=${port}`;
    assert.equal(await card.getByLabel('Linux').inputValue(), `sudo mkdir -p /mnt/films && sudo mount -t nfs -o ${opts} 127.0.0.1:/home/films /mnt/films`);
    assert.equal(await card.getByLabel('macOS').inputValue(), `mkdir -p ~/films && sudo mount -t nfs -o ${opts} 127.0.0.1:/home/films ~/films`);
    const url = await card.getByLabel('Kodi / libnfs').inputValue();
    assert.equal(url, `nfs://127.0.0.1/home/films?nfsport=${port}&mountport=${port}&version=3`);
    await card.getByRole('button', { name: 'Copy' }).first().click();
    await card.getByRole('button', { name: 'Copied' }).waitFor();
    await api('POST', '/api/files/mkdir', { path: '/home/films/Holiday' });
    const ls = await promisify(execFile)('timeout', ['30', 'nfs-ls', url]);
    assert.match(ls.stdout, /Holiday/);

    // A client connected now is listed.
    const c = await RpcClient.open(port);
    try {
      const fh = await mountRoot(c, '/home/films');
      assert.equal((await c.call(NFS, 1, (w) => w.opaque(fh))).accept, 0);
      await page.reload();
      await section()
        .getByTestId('nfs-connected')
        .getByText(/from 127\.0\.0\.1/)
        .waitFor();
      assert.match(await section().getByTestId('nfs-connected').innerText(), /\(\/home\/films\) from 127\.0\.0\.1/);
      await section().getByTestId(`nfs-export-${e.id}`).getByText('Mount commands').click();
      await section().scrollIntoViewIfNeeded();
      await keep(page, 'ui-nfs-exports');
    } finally {
      c.socket.destroy();
    }

    // Edit: read-only.
    await section().getByTestId(`nfs-export-${e.id}`).getByRole('button', { name: 'Edit' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit export /home/films' });
    assert.equal(await edit.getByLabel('Allowed client addresses').inputValue(), '127.0.0.1/32, 192.168.1.0/24');
    await edit.getByLabel('Read-only (every write refused)').check();
    await edit.getByRole('button', { name: 'Save' }).click();
    await edit.waitFor({ state: 'hidden' });
    assert.equal((await exportsNow())[0].read_only, true);
    await section().getByTestId(`nfs-export-${e.id}`).getByText('Read-only', { exact: true }).waitFor();
    await section().getByTestId('nfs-warning').waitFor();

    // Delete.
    await section().getByTestId(`nfs-export-${e.id}`).getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog', { name: 'Delete export' }).getByRole('button', { name: 'Delete' }).click();
    await section().getByText('No export yet').waitFor();
    assert.deepEqual(await exportsNow(), []);
    await section().getByTestId('nfs-warning').waitFor();
    // The one refused save is the only console error (Chromium logs every 4xx response).
    assert.deepEqual(
      errors.filter((x) => !/status of 400/.test(x)),
      [],
    );
  });

  test('a file written, renamed and removed over NFS: the open folder shows each at once, without a reload', async () => {
    const made = await api('POST', '/api/admin/gateways/nfs/exports', { path: '/home/films', clients: '127.0.0.1/32', user_id: adminId });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const c = await RpcClient.open(port);
    try {
      await page.goto(`${srv.url}/files/home/films`);
      await page.getByTestId('file-list').waitFor();
      const dir = await mountRoot(c, '/home/films');
      const created = await c.call(NFS, 8, (w) => dirop(w, dir, 'Trailer.mkv').u32(1).u32(0).u32(0).u32(0).u32(0).u32(0).u32(0));
      assert.equal(created.r.u32(), 0, 'CREATE ok');
      assert.equal(created.r.u32(), 1, 'a handle follows');
      const fh = Buffer.from(created.r.opaque(64));
      const body = Buffer.alloc(70_000, 7);
      assert.equal((await c.call(NFS, 7, (w) => w.opaque(fh).u64(0).u32(body.length).u32(0).opaque(body))).r.u32(), 0, 'WRITE ok');
      assert.equal((await c.call(NFS, 21, (w) => w.opaque(fh).u64(0).u32(0))).r.u32(), 0, 'COMMIT ok');
      await fileRow(page, 'Trailer.mkv').waitFor({ timeout: 15_000 });
      assert.equal((await c.call(NFS, 14, (w) => dirop(dirop(w, dir, 'Trailer.mkv'), dir, 'Film.mkv'))).r.u32(), 0, 'RENAME ok');
      await fileRow(page, 'Film.mkv').waitFor({ timeout: 15_000 });
      await fileRow(page, 'Trailer.mkv').waitFor({ state: 'detached', timeout: 15_000 });
      assert.equal((await c.call(NFS, 12, (w) => dirop(w, dir, 'Film.mkv'))).r.u32(), 0, 'REMOVE ok');
      await fileRow(page, 'Film.mkv').waitFor({ state: 'detached', timeout: 15_000 });
    } finally {
      c.close();
      await api('DELETE', `/api/admin/gateways/nfs/exports/${made.body.export.id}`);
    }
    await page.goto(`${srv.url}/admin/gateways`);
    await section().waitFor();
  });

  test('phone 390x844: the section fits without sideways scrolling; Turkish', async () => {
    assert.equal(
      (await api('POST', '/api/admin/gateways/nfs/exports', { path: '/home/films', clients: 'private', user_id: adminId, read_only: true })).status,
      201,
    );
    const { ctx, page: phone } = await signedInPage(browser, srv.url, ADMIN, {
      viewport: { width: 390, height: 844 },
      hasTouch: true,
      isMobile: true,
      deviceScaleFactor: 2,
    });
    try {
      await phone.goto(`${srv.url}/admin/gateways`);
      const nfs = phone.getByRole('region', { name: 'NFS exports' });
      await nfs.waitFor();
      await nfs.getByText('Mount commands').first().click();
      await nfs.scrollIntoViewIfNeeded();
      assert.equal(await phone.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), true, 'no sideways scrolling');
      await keep(phone, 'ui-nfs-exports-phone');
      await nfs.getByRole('button', { name: 'Add export' }).click();
      await phone.getByRole('dialog', { name: 'Add export' }).waitFor();
      await keep(phone, 'ui-nfs-exports-form-phone');
      await phone.getByRole('dialog', { name: 'Add export' }).getByRole('button', { name: 'Cancel' }).click();
    } finally {
      await ctx.close();
    }
    await page.getByLabel('Language').selectOption('tr');
    const tr = page.getByRole('region', { name: 'NFS paylaşımları' });
    await tr.waitFor();
    assert.match(await tr.getByTestId('nfs-warning').innerText(), /NFSv3’te parola yoktur/);
    await page.getByLabel('Dil').selectOption('en');
    await section().waitFor();
  });
});
