/**
 * The leak test of issue 31: through the web UI, encrypted folders and files
 * whose names and contents carry unique markers (ASCII and non-ASCII), an
 * image so a thumbnail is made, a rename, a subfolder, a browser-side filter
 * and a preview; then every byte the service holds — the storage's folder, the
 * data folder (database with its -wal, thumbnails, staging, anything else) and
 * the service's log — is read and none of the markers may appear, in UTF-8,
 * UTF-16, percent-encoded or JSON-escaped form. A plaintext control file
 * uploaded afterwards outside the vault shows the same search finds them.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import sharp from 'sharp';
import { needTool, tempDir } from '../helpers/tools';
import { spawnServer, type ChildServer } from '../helpers/child-server';
import { pngWithText } from '../helpers/fake-diagram';
import { ADMIN, ensureRendererBuilt, fileRow, launchBrowser, signedInPage } from './ui-harness';
import { confirmRecoveryKey, createVault, newEncryptedFolder, upload, uploadsDone, walk } from './ui-vault-helpers';

const skip = needTool('chromium', 'chromium') ?? undefined;

const M = {
  folder: 'LEAKfolderQ7x',
  folderUni: 'Şifreliklasör-ğüİx',
  name: 'LEAKnameA1x',
  nameUni: 'gizliadı-çöğ',
  renamed: 'LEAKrenamedF6x',
  content: 'LEAKcontentB2x',
  contentUni: 'içerikişareti-ÇĞÜŞÖİ',
  image: 'LEAKimageD4x',
  pixels: 'LEAKpixelsE5x',
  filter: 'LEAKrenamed',
};

/** Every form a marker could take in a file, a database row or a log line. */
function forms(marker: string): Buffer[] {
  const json = JSON.stringify(marker).slice(1, -1);
  const escaped = marker.replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return [...new Set([marker, marker.normalize('NFD'), encodeURIComponent(marker), json, escaped])].flatMap((s) => [
    Buffer.from(s, 'utf8'),
    Buffer.from(s, 'utf16le'),
  ]);
}

/** `[file, marker]` for every marker form found in the files. */
function findMarkers(files: Array<{ name: string; bytes: Buffer }>): string[] {
  const hits: string[] = [];
  for (const [key, marker] of Object.entries(M))
    for (const form of forms(marker)) for (const f of files) if (f.bytes.includes(form)) hits.push(`${key} (${form.toString('utf8')}) in ${f.name}`);
  return [...new Set(hits)];
}

describe('web UI: nothing of an encrypted folder reaches the server in the clear', { skip, timeout: 600_000 }, () => {
  let srv: ChildServer;
  let browser: Browser;
  let page: Page;
  let dir: string;
  let cleanup: () => void;
  const store = () => join(dir, 'store');
  const data = () => join(dir, 'data');
  const work = () => join(dir, 'work');

  before(async () => {
    ensureRendererBuilt();
    ({ dir, cleanup } = tempDir('filedock-leak-'));
    for (const d of [store(), data(), work()]) mkdirSync(d, { recursive: true });
    srv = await spawnServer({
      SERVICE_DATA_DIR: data(),
      SERVICE_ADMIN_EMAIL: ADMIN.email,
      SERVICE_ADMIN_PASSWORD: ADMIN.password,
      SERVICE_DEFAULT_STORAGE_DRIVER: 'local',
      SERVICE_DEFAULT_STORAGE_NAME: 'home',
      SERVICE_DEFAULT_STORAGE_PATH: store(),
      SERVICE_LOG_LEVEL: 'debug',
    });
    browser = await launchBrowser();
    ({ page } = await signedInPage(browser, srv.url, undefined, { acceptDownloads: true }));
  });

  after(async () => {
    await browser?.close();
    await srv?.stop();
    cleanup?.();
  });

  test('encrypted names, contents, a thumbnail, a rename, a filter and a preview leave no marker anywhere', async () => {
    await createVault(page, srv.url);
    await confirmRecoveryKey(page);
    await newEncryptedFolder(page, 'Private');
    await fileRow(page, 'Private').dblclick();

    const files = {
      [`${M.name}.txt`]: Buffer.from(`${M.content}\n${M.contentUni}\n`),
      [`${M.nameUni}.md`]: Buffer.from(`# ${M.contentUni}\n\n${M.content}\n`),
      [`${M.image}.png`]: Buffer.from(
        pngWithText(
          await sharp({ create: { width: 800, height: 600, channels: 3, background: '#e33' } })
            .png()
            .toBuffer(),
          'Comment',
          M.pixels,
        ),
      ),
    };
    for (const [n, b] of Object.entries(files)) writeFileSync(join(work(), n), b);
    await upload(
      page,
      Object.keys(files).map((n) => join(work(), n)),
    );
    await uploadsDone(page);
    for (const n of Object.keys(files)) await fileRow(page, n).waitFor();

    // A subfolder with a marked name, and a file in it.
    for (const name of [M.folder, M.folderUni]) {
      await page.getByRole('button', { name: 'New folder' }).click();
      await page.getByLabel('Folder name').fill(name);
      await page.getByRole('button', { name: 'Create', exact: true }).click();
      await fileRow(page, name).waitFor();
    }
    await fileRow(page, M.folder).dblclick();
    await upload(page, [join(work(), `${M.name}.txt`)]);
    await fileRow(page, `${M.name}.txt`).waitFor({ timeout: 60_000 });
    await page.goBack();

    // The image's thumbnail is drawn, encrypted and stored, then shown decrypted.
    await page.getByRole('button', { name: 'Grid view' }).click();
    await fileRow(page, `${M.image}.png`).locator('img[src^="blob:"]').waitFor({ timeout: 60_000 });
    await page.getByRole('button', { name: 'List view' }).click();

    // A rename sends only the new encrypted name.
    await fileRow(page, `${M.name}.txt`).click();
    await page.keyboard.press('F2');
    await page.getByLabel('New name').fill(`${M.renamed}.txt`);
    await page.getByRole('button', { name: 'Rename' }).click();
    await fileRow(page, `${M.renamed}.txt`).waitFor();

    // The filter runs on decrypted names in the page, never as a server search.
    const searched: string[] = [];
    page.on('request', (r) => r.url().includes('/api/files/search') && searched.push(r.url()));
    await page.locator('#search-q').fill(M.filter);
    await page.keyboard.press('Enter');
    await fileRow(page, `${M.renamed}.txt`).waitFor();
    assert.deepEqual(searched, []);

    // A preview decrypts in the page.
    await page.getByRole('button', { name: 'Clear search' }).click();
    await fileRow(page, `${M.nameUni}.md`).dblclick();
    await page.getByTestId('preview').getByText(M.content).waitFor({ timeout: 30_000 });
    await page.keyboard.press('Escape');

    const everything = [...walk(store()), ...walk(data())].map((name) => ({ name, bytes: readFileSync(name) }));
    assert.ok(
      everything.some((f) => f.name.endsWith('-wal')),
      `the database's write-ahead log is among the files read: ${everything.map((f) => f.name).join(', ')}`,
    );
    assert.ok(everything.length > 10);
    everything.push({ name: 'service log', bytes: Buffer.from(srv.log()) });
    assert.ok(srv.log().length > 0, 'the service logged something');
    assert.deepEqual(findMarkers(everything), []);

    // The control: the same bytes uploaded outside the vault are found by the same search.
    await page.goto(`${srv.url}/files/home`);
    writeFileSync(join(work(), 'control.txt'), Object.values(M).join('\n'));
    await upload(page, [join(work(), 'control.txt')]);
    await fileRow(page, 'control.txt').waitFor({ timeout: 60_000 });
    const control = [{ name: 'control.txt', bytes: readFileSync(join(store(), 'control.txt')) }];
    assert.equal(findMarkers(control).length >= Object.keys(M).length, true, findMarkers(control).join('\n'));
    for (const key of Object.keys(M))
      assert.ok(
        findMarkers(control).some((h) => h.startsWith(`${key} `)),
        key,
      );
  });
});
