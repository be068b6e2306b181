/**
 * The "SSH keys" card of Sessions & keys in Debian's Chromium against a real
 * server with the SFTP gateway on: a private key pasted by mistake is refused
 * in the form's words; a public key added shows its fingerprint (as
 * ssh-keygen prints it), signs OpenSSH's sftp in, and shows when it was last
 * used; removed, it no longer signs in. The card in Turkish. No console
 * errors beyond the refusal provoked.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { freePort, needTool, tempDir } from '../helpers/tools';
import { run } from '../helpers/sftp-clients';
import { ADMIN, ensureRendererBuilt, launchBrowser, newPage, shot, signIn, startServer, type RunningServer, desktopContext, signedInPage } from './ui-harness';

const skip = needTool('chromium', 'chromium') ?? needTool('sftp', 'openssh-client') ?? undefined;

describe('web UI: SSH keys', { skip, timeout: 120_000 }, () => {
  let srv: RunningServer;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  let sftpPort: number;
  let keyDir: { dir: string; cleanup: () => void };
  let keyPath: string;

  const sftpWithKey = () =>
    run(
      'sftp',
      [
        '-b',
        '-',
        '-P',
        String(sftpPort),
        '-i',
        keyPath,
        '-o',
        'IdentitiesOnly=yes',
        '-o',
        'PasswordAuthentication=no',
        '-o',
        'StrictHostKeyChecking=no',
        '-o',
        'UserKnownHostsFile=/dev/null',
        '-o',
        `User=${ADMIN.email}`,
        '127.0.0.1',
      ],
      { input: 'ls\n', seconds: 30 },
    );

  before(async () => {
    ensureRendererBuilt();
    keyDir = tempDir('filedock-ui-ssh-');
    keyPath = join(keyDir.dir, 'id_ed25519');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'me@laptop', '-f', keyPath]);
    sftpPort = await freePort();
    srv = await startServer({ SERVICE_SFTP_LISTEN: `127.0.0.1:${sftpPort}` });
    browser = await launchBrowser();
    ({ page, errors } = await signedInPage(browser, srv.url));
  });
  after(async () => {
    await browser?.close();
    await srv?.stop();
    keyDir?.cleanup();
  });

  test('add (a private key refused first), sign in with it, see it used, remove it', async () => {
    await page.goto(`${srv.url}/account/access`);
    const card = page.locator('section.card', { has: page.getByRole('heading', { name: 'SSH keys' }) });
    await card.getByText('No SSH keys yet.').waitFor();
    await card.getByRole('button', { name: 'Add SSH key' }).click();
    const dlg = page.getByRole('dialog', { name: 'Add SSH key' });
    await dlg.getByLabel('Public key').fill(readFileSync(keyPath, 'utf8'));
    await dlg.getByRole('button', { name: 'Add SSH key' }).click();
    await dlg.getByRole('alert').filter({ hasText: 'This is a private key' }).waitFor();
    await dlg.getByLabel('Public key').fill(readFileSync(`${keyPath}.pub`, 'utf8'));
    await dlg.getByLabel('Name').fill('Laptop');
    await dlg.getByRole('button', { name: 'Add SSH key' }).click();
    await dlg.waitFor({ state: 'detached' });
    await page.getByText('SSH key “Laptop” added.').waitFor();
    const fp = execFileSync('ssh-keygen', ['-lf', `${keyPath}.pub`], { encoding: 'utf8' }).split(' ')[1];
    const row = card.getByTestId('ssh-keys').getByRole('row', { name: /Laptop/ });
    assert.equal(await row.locator('code').innerText(), fp);
    assert.match(await row.innerText(), /Never/);
    await shot(page, 'ui-ssh-keys');

    const ok = await sftpWithKey();
    assert.equal(ok.code, 0, ok.stderr);
    await page.reload();
    await card.getByTestId('ssh-keys').waitFor();
    assert.doesNotMatch(
      await card
        .getByTestId('ssh-keys')
        .getByRole('row', { name: /Laptop/ })
        .innerText(),
      /Never/,
      'last used is shown',
    );

    await card.getByRole('button', { name: 'Remove SSH key Laptop' }).click();
    await page.getByRole('dialog', { name: 'Remove SSH key Laptop' }).getByRole('button', { name: 'Remove' }).click();
    await page.getByText('SSH key “Laptop” removed.').waitFor();
    await card.getByText('No SSH keys yet.').waitFor();
    assert.notEqual((await sftpWithKey()).code, 0, 'a removed key no longer signs in');
  });

  test('the card in Turkish', async () => {
    const ctx = await desktopContext(browser, { locale: 'tr-TR' });
    const { page: tr, errors: trErrors } = await newPage(ctx);
    await signIn(tr, srv.url);
    await tr.goto(`${srv.url}/account/access?lang=tr`);
    await tr.getByRole('heading', { name: 'SSH anahtarları' }).waitFor();
    await tr.getByRole('button', { name: 'SSH anahtarı ekle' }).waitFor();
    // The signed-out first load asks who is signed in (401) before the form.
    assert.deepEqual(
      trErrors.filter((e) => !/status of 401/.test(e)),
      [],
    );
    assert.deepEqual(
      errors.filter((e) => !/status of (400|401)/.test(e)),
      [],
      'no console errors beyond the refused private key',
    );
  });
});
