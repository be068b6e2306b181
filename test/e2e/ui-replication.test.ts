/**
 * Admin → Replication in Debian's Chromium against a real server, local →
 * local-folder target: a target made through the form, the default storage
 * linked to it, a write seen on the target, two rules reordered by drag and
 * drop (and back with the keyboard buttons; priorities checked over the API),
 * a glob error shown at its field, a failure (the target's folder replaced by
 * a file) listed, Fix all, resolved; the recovery point shown throughout; the
 * audit schedules set in the settings card.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { needTool, tempDir } from '../helpers/tools';
import { until } from '../helpers/replica';
import { ADMIN, ensureRendererBuilt, launchBrowser, shot, signedInPage, startServer, type RunningServer } from './ui-harness';

const skip = needTool('chromium', 'chromium') ?? undefined;

describe('web UI: replication', { skip, timeout: 240_000 }, () => {
  let srv: RunningServer;
  let base: string;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  let backup: string;
  let cleanup: () => void;

  /** A JSON call with the page's session. */
  const api = (method: string, path: string, body?: unknown) =>
    page.evaluate(
      async ([m, p, b]) => {
        const r = await fetch(p as string, {
          method: m as string,
          headers: { 'Content-Type': 'application/json' },
          body: b === undefined ? undefined : JSON.stringify(b),
        });
        return { status: r.status, body: await r.json().catch(() => null) };
      },
      [method, path, body] as const,
    );
  const write = async (path: string, content: string) => assert.equal((await api('POST', '/api/files/save-text', { path, content })).status, 200);
  const priorities = async () => {
    const r = await api('GET', '/api/admin/replica/rules');
    return Object.fromEntries((r.body.rules as { path_pattern: string; priority: number }[]).map((x) => [x.path_pattern, x.priority]));
  };
  const ruleOrder = () => page.locator('.rule-list li code').allInnerTexts();

  before(async () => {
    ensureRendererBuilt();
    let dir: string;
    ({ dir, cleanup } = tempDir('filedock-ui-repl-'));
    backup = join(dir, 'backup');
    // A short amber threshold, so the recovery point of a failure crosses it during the test.
    srv = await startServer({ SERVICE_REPLICA_RETRY_BACKOFF: '100ms', SERVICE_REPLICA_RPO_WARN: '3s' });
    base = srv.url;
    browser = await launchBrowser();
    ({ page, errors } = await signedInPage(browser, base, ADMIN, { viewport: { width: 1280, height: 1000 } }));
  });
  after(async () => {
    await browser?.close();
    await srv?.stop();
    cleanup?.();
  });

  test('no target: "No backups set up" with the way to add one, the drill disabled with its reason (desktop and phone)', async () => {
    const check = async (p: Page) => {
      await p.goto(`${base}/admin/replication`);
      await p.getByRole('heading', { name: 'Backup targets' }).waitFor();
      const none = p.getByTestId('replica-none');
      await none.waitFor();
      assert.match(await none.innerText(), /^No backups set up\n/);
      assert.equal(await p.getByTestId('replica-rpo').count(), 0, 'no recovery point, least of all a green "Up to date"');
      const drill = p.getByRole('button', { name: 'Run drill now' });
      assert.equal(await drill.isDisabled(), true);
      assert.equal(await drill.getAttribute('aria-describedby'), 'replica-drill-off');
      assert.equal(await p.locator('#replica-drill-off').innerText(), 'A restore drill needs a storage backed up to an enabled target.');
      return none;
    };
    const none = await check(page);
    await shot(page, 'ui-replication-no-backups');
    const phone = await signedInPage(browser, base, ADMIN, { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    try {
      await check(phone.page);
      await shot(phone.page, 'ui-replication-no-backups-phone');
      assert.deepEqual(phone.errors, []);
    } finally {
      await phone.ctx.close();
    }
    // The link leads to the targets card, onto its "Add target" button.
    await none.getByRole('link', { name: 'Add a backup target' }).click();
    await page.waitForFunction(() => document.activeElement?.textContent === 'Add target');
    assert.equal((await api('POST', '/api/admin/replica/drill/run-now', {})).status, 409);
    errors.length = 0; // the refused drill is logged by Chromium as a failed load
  });

  test('a target made through the form, a storage linked, a write lands on the target', async () => {
    await page.goto(`${base}/admin/replication`);
    await page.getByRole('heading', { name: 'Backup targets' }).waitFor();
    assert.equal(await page.getByTestId('replica-report').innerText(), 'No report yet.');
    await page.getByRole('button', { name: 'Add target' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel(/^Name/).fill('nas');
    await dialog.getByLabel('Driver').selectOption('local');
    await dialog.locator('#f-path').fill(backup);
    await dialog.getByLabel('Copy mode').selectOption('async');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await page.getByTestId('target-nas').waitFor();
    assert.match(await page.getByTestId('target-nas').innerText(), /nas\s[\s\S]*local[\s\S]*In the background/);

    await page.getByLabel('Back up home to').selectOption({ label: 'nas' });
    await page.getByTestId('target-nas').getByText('home').waitFor();
    const storages = (await api('GET', '/api/admin/storages')).body.storages as { name: string; replica_target_id: number | null }[];
    const target = (await api('GET', '/api/admin/replication-targets')).body.targets[0];
    assert.equal(storages.find((s) => s.name === 'home')!.replica_target_id, target.id);
    // Backed up now: the recovery point replaces "No backups set up", and a drill can run.
    await page.getByTestId('replica-rpo').filter({ hasText: 'Up to date' }).waitFor();
    assert.equal(await page.getByTestId('replica-none').count(), 0);
    assert.equal(await page.getByRole('button', { name: 'Run drill now' }).isDisabled(), false);

    await write('/home/hello.txt', 'hello, backup');
    await until('hello.txt on the target', () => existsSync(join(backup, 'hello.txt')) && readFileSync(join(backup, 'hello.txt'), 'utf8') === 'hello, backup');
    await shot(page, 'admin-replication-target');
  });

  test('rules: a bad glob shown at its field; two rules reordered by drag and by the arrow buttons, priorities saved', async () => {
    const add = async (pattern: string, mode: string) => {
      await page.getByRole('button', { name: 'Add rule' }).click();
      const d = page.getByRole('dialog');
      await d.getByLabel(/^Path pattern/).fill(pattern);
      await d.getByLabel('Mode').selectOption(mode);
      await d.getByRole('button', { name: 'Save' }).click();
      return d;
    };
    const bad = await add('home/[x', 'mirror');
    const fieldError = bad.locator('label', { hasText: 'Path pattern' }).getByRole('alert');
    await fieldError.waitFor();
    assert.ok((await fieldError.innerText()).length > 0);
    await bad.getByRole('button', { name: 'Cancel' }).click();
    errors.length = 0; // Chromium logs the expected 400 as a failed resource load

    await (await add('home/photos/**', 'append_only')).waitFor({ state: 'detached' });
    await (await add('home/tmp/**', 'skip')).waitFor({ state: 'detached' });
    await page.getByTestId('rule-home/tmp/**').waitFor();
    assert.deepEqual(await ruleOrder(), ['home/photos/**', 'home/tmp/**']);
    const before = await priorities();
    assert.ok(before['home/photos/**'] < before['home/tmp/**']);

    // Drag the second rule onto the first: it goes first, and the order is saved as priorities.
    await page.getByTestId('rule-home/tmp/**').dragTo(page.getByTestId('rule-home/photos/**'));
    await until('the dragged order saved', async () => {
      const p = await priorities();
      return p['home/tmp/**'] < p['home/photos/**'];
    });
    await until('the list re-read', async () => (await ruleOrder())[0] === 'home/tmp/**');
    assert.deepEqual(await priorities(), { 'home/tmp/**': 10, 'home/photos/**': 20 });
    await shot(page, 'admin-replication-rules');

    // The keyboard way back: "Move … down" on the first rule.
    await page.getByRole('button', { name: 'Move home/tmp/** down' }).click();
    await until('the arrow order saved', async () => {
      const p = await priorities();
      return p['home/photos/**'] < p['home/tmp/**'];
    });
    await until('the list re-read', async () => (await ruleOrder())[0] === 'home/photos/**');

    // The rules apply: the skipped folder stays off the target.
    await api('POST', '/api/files/mkdir', { path: '/home/tmp' });
    await write('/home/tmp/scratch.txt', 'not backed up');
    await write('/home/after-rules.txt', 'backed up');
    await until('a later write on the target', () => existsSync(join(backup, 'after-rules.txt')));
    assert.equal(existsSync(join(backup, 'tmp/scratch.txt')), false);
  });

  test('a failed copy listed with the recovery point behind; Fix all repairs it', async () => {
    // The target's folder replaced by a file: every copy to it fails, as a dead disk would.
    renameSync(backup, backup + '.away');
    writeFileSync(backup, 'not a folder');
    await write('/home/while-down.txt', 'written while the target was down');
    await until('the failure logged', async () => (await api('GET', '/api/admin/replica/failures/count')).body.count >= 1);

    await page.reload();
    const row = page.getByTestId('replica-failure').filter({ hasText: '/home/while-down.txt' });
    await row.waitFor({ timeout: 15_000 });
    assert.match(await row.innerText(), /write[\s\S]*REPLICA_WRITE_FAIL/);
    // The recovery point counts from the first failure (polled every 5 s); amber past SERVICE_REPLICA_RPO_WARN.
    await page
      .locator('[data-testid=replica-rpo].rpo-warn')
      .filter({ hasText: /\d+ s behind/ })
      .waitFor({ timeout: 20_000 });
    assert.equal((await api('GET', '/api/admin/replica/status')).body.rpo_warn_s, 3);
    assert.notEqual(await page.getByTestId('replica-unresolved').innerText(), '0');
    await shot(page, 'admin-replication-failure');

    rmSync(backup);
    renameSync(backup + '.away', backup);
    await page.getByRole('button', { name: 'Fix all' }).click();
    await page.getByTestId('replica-no-failures').waitFor({ timeout: 30_000 });
    await until('the repaired copy on the target', () => existsSync(join(backup, 'while-down.txt')));
    assert.equal(readFileSync(join(backup, 'while-down.txt'), 'utf8'), 'written while the target was down');
    // Resolved rows stay in the full list.
    await page.getByLabel('Unresolved only').uncheck();
    await row.filter({ hasText: 'Resolved' }).waitFor();
    await page.locator('[data-testid=replica-rpo].ok').filter({ hasText: 'Up to date' }).waitFor({ timeout: 20_000 });

    await page.getByRole('button', { name: 'Run report now' }).click();
    await page.getByTestId('replica-report').filter({ hasText: '0 unresolved failures' }).waitFor();
    assert.deepEqual(errors, []);
  });
  test('settings: the audit schedules and sample size saved from the form, a bad cron shown at its field', async () => {
    await page.reload();
    const card = page.getByRole('region', { name: 'Replication settings' });
    const daily = card.getByLabel('Sampled content audit schedule (cron)');
    assert.equal(await daily.inputValue(), '30 4 * * *');
    await daily.fill('every night');
    await card.getByRole('button', { name: 'Save' }).click();
    await card.getByRole('alert').waitFor();
    assert.equal(await daily.getAttribute('aria-invalid'), 'true');
    assert.equal((await api('GET', '/api/admin/replica/settings')).body.audit_cron, '30 4 * * *', 'nothing saved');
    await daily.fill('15 2 * * *');
    await card.getByLabel('Files checked per storage in a sampled audit').fill('20');
    await card.getByLabel('Full content audit schedule (cron)').fill('');
    await card.getByRole('button', { name: 'Save' }).click();
    await until('the settings saved', async () => (await api('GET', '/api/admin/replica/settings')).body.audit_sample_size === 20);
    const saved = (await api('GET', '/api/admin/replica/settings')).body;
    assert.deepEqual([saved.audit_cron, saved.audit_full_cron], ['15 2 * * *', '']);
    assert.deepEqual(
      errors.filter((e) => !/400/.test(e)),
      [],
    );
  });
});
