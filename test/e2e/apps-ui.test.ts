/**
 * App plugins in Chromium (issue 21, the web UI; docs/app-plugins.md "The web UI"):
 * 1. Against the real server from source: the admin trusts a publisher key and
 *    installs a signed test app through Admin → Apps; on a selected file the
 *    context menu runs its action, which opens a dialog surface: a `select`
 *    drawn as choice buttons, a `show_when` field appearing, a required field
 *    the server refuses shown at the field; the submit starts a job that the ops
 *    panel shows finishing, and its output file appears in the listing.
 * 2. The public app page (dist/renderer/app-page.html) against a SMALL FAKE of
 *    the four public routes, kept inside this file: the real ones are built in
 *    parallel (branch apps-public). PIN (wrong → tries left), the surface, a
 *    submit answered 202 → the "sent" screen; a revoked link (410).
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { extname, join, normalize } from 'node:path';
import type { Browser } from 'playwright-core';
import { needTool } from '../helpers/tools';
import { buildAppPackage, publisherKey } from '../helpers/app-package';
import { desktopContext, ensureRendererBuilt, launchBrowser, newPage, shot, signIn, signedInPage, startServer, type RunningServer } from './ui-harness';

const skip = needTool('chromium', 'chromium') ?? undefined;
const root = new URL('../..', import.meta.url).pathname;

const FORMS_CODE = String.raw`
app.view = async ({ paths }) => ({
  title: 'Fill in the form',
  nodes: [
    { type: 'text', text: 'Making a copy of ' + paths[0].name },
    { type: 'form', fields: [
      { key: 'mode', type: 'select', label: 'Mode', default: 'plain', options: [{ value: 'plain', label: 'Plain' }, { value: 'fancy', label: 'Fancy' }] },
      { key: 'motto', type: 'string', label: 'Motto', required: true, show_when: { key: 'mode', equals: ['fancy'] } },
      { key: 'copies', type: 'int', label: 'Copies', min: 1, max: 3, default: 1 },
    ] },
  ],
  footer: [{ id: 'go', label: 'Make it', primary: true }, { id: 'later', label: 'Later' }],
  state: { opened: true },
});
app.event = async ({ event, data, state }) => {
  if (event === 'submit' && state && state.opened) return { job: { action: 'make', params: { motto: data.motto || '', mode: data.mode } } };
  return { nodes: [{ type: 'text', text: 'no state came back' }] };
};
app.action = async ({ action, paths, params }) => {
  const p = paths[0];
  const r = await host.call('files.read', { path: p.path });
  await host.call('ops.progress', { fraction: 0.5, message: 'writing' });
  await host.call('files.write', { path: p.path.replace(/\.txt$/, '.made.txt'), data: params.mode + ': ' + params.motto + ' / ' + r.data, overwrite: true });
  return { message: 'made one copy' };
};
`;

const formsManifest = {
  id: 'forms', name: 'Forms', version: '1.0.0', publisher: 'acme', filex_range: '>=0.1.0 <1.0.0', default_language: 'en',
  permissions: ['files.read', 'files.write'], call_timeout_ms: 5000,
  actions: [
    { id: 'fill', label: 'a.fill', applies: { kind: 'file', ext: ['txt'] }, view: 'fill', view_placement: 'dialog' },
    { id: 'make', label: 'a.make', applies: { kind: 'file', ext: ['txt'] }, output_mode: 'new_file' },
    { id: 'side', label: 'a.side', applies: { kind: 'file', ext: ['txt'] }, view: 'fill', view_placement: 'panel' },
  ],
  views: [{ id: 'fill', label: 'v.fill', placement: 'dialog' }],
};
const FORMS_PACKS = { en: { 'a.fill': 'Fill in a copy', 'a.make': 'Make a copy', 'a.side': 'Fill at the side', 'v.fill': 'Fill in' }, tr: { 'a.fill': 'Kopya doldur', 'a.make': 'Kopya yap', 'a.side': 'Yanda doldur', 'v.fill': 'Doldur' } };

describe('apps in the browser (real server)', { skip, timeout: 240_000 }, () => {
  let srv: RunningServer;
  let browser: Browser;

  before(async () => {
    ensureRendererBuilt();
    srv = await startServer();
    writeFileSync(join(srv.dataDir, 'notes.txt'), 'hello notes');
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await srv?.stop();
  });

  test('install through Admin → Apps, run from the context menu, a dialog form refused at its field, a job that writes a file', async () => {
    const key = publisherKey('acme');
    const pkg = await buildAppPackage({ key, manifest: formsManifest, code: FORMS_CODE, languages: FORMS_PACKS });
    const { ctx, page, errors } = await signedInPage(browser, srv.url);
    try {
      errors.length = 0; // the sign-in page's session probe answers 401 before signing in
      await page.goto(`${srv.url}/admin/apps`);
      const tab = page.getByTestId('admin-apps');
      await tab.getByText('No app is installed.').waitFor();

      // A package from an untrusted publisher is refused, with the envelope's message and the field.
      const install = tab.getByRole('region', { name: 'Install an app' });
      await install.getByLabel('Package (.zip)').setInputFiles({ name: 'forms.zip', mimeType: 'application/zip', buffer: pkg });
      await install.getByRole('button', { name: 'Install' }).click();
      await install.getByRole('alert').getByText(/signature\.json/).waitFor();

      const keys = tab.getByRole('region', { name: 'Trusted publisher keys' });
      await keys.getByLabel('Publisher').fill('acme');
      await keys.getByLabel('Public key (PEM)').fill(key.trusted.public_key_pem);
      await keys.getByRole('button', { name: 'Add key' }).click();
      await keys.getByRole('button', { name: 'Remove the key of acme' }).waitFor();

      await install.getByLabel('Package (.zip)').setInputFiles({ name: 'forms.zip', mimeType: 'application/zip', buffer: pkg });
      await install.getByRole('button', { name: 'Install' }).click();
      const card = tab.getByTestId('app-forms');
      await card.getByRole('heading', { name: /Forms\s+1\.0\.0/ }).waitFor();
      assert.equal(await card.getByLabel('Enable Forms').isChecked(), true);
      await card.getByText('files.write').waitFor();

      // Settings: bad JSON is refused at the field, without a request.
      await card.getByLabel('Settings (JSON)').fill('{ nope');
      await card.getByRole('button', { name: 'Save settings' }).click();
      await card.getByText(/^Not valid JSON/).waitFor();
      await card.getByLabel('Settings (JSON)').fill('{"greeting": "hi"}');
      await card.getByRole('button', { name: 'Save settings' }).click();
      await page.getByText('Saved.').first().waitFor();
      await shot(page, 'apps-admin');

      // The file manager: the app's action on the selected file, from the context menu.
      await page.goto(`${srv.url}/files/home`);
      const list = page.getByTestId('file-list');
      const row = list.getByRole('option', { name: /notes\.txt/ });
      await row.waitFor({ timeout: 15_000 });
      await row.click();
      await row.click({ button: 'right' });
      await page.getByRole('menuitem', { name: 'Fill in a copy' }).click();

      const dialog = page.getByRole('dialog', { name: 'Fill in the form' });
      await dialog.getByText('Making a copy of notes.txt').waitFor();
      const plain = dialog.getByRole('radio', { name: 'Plain' });
      const fancy = dialog.getByRole('radio', { name: 'Fancy' });
      assert.equal(await plain.getAttribute('aria-checked'), 'true');
      assert.equal(await dialog.getByLabel(/^Motto/).count(), 0, 'hidden until its show_when holds');
      await fancy.click();
      assert.equal(await fancy.getAttribute('aria-checked'), 'true');
      const motto = dialog.getByLabel(/^Motto/);
      await motto.waitFor();

      // Submitted empty: the server refuses (422 required) and the UI says so at the field.
      const submitted = page.waitForResponse((r) => r.url().includes('/views/forms/fill/event'));
      await dialog.getByRole('button', { name: 'Make it' }).click();
      const refused = await submitted;
      assert.equal(refused.status(), 422);
      const mottoField = dialog.locator('.app-field', { has: page.getByLabel(/^Motto/) });
      await mottoField.getByText('Required').waitFor();
      assert.equal(await motto.getAttribute('aria-invalid'), 'true');
      await shot(page, 'apps-dialog-refused');

      await motto.fill('Carpe diem');
      const accepted = page.waitForResponse((r) => r.url().includes('/views/forms/fill/event'));
      await dialog.getByRole('button', { name: 'Make it' }).click();
      assert.equal((await accepted).status(), 202);
      await dialog.waitFor({ state: 'detached' });

      // The job in the ops panel (opened for it), finished, with its message and result.
      const ops = page.getByRole('region', { name: 'Operations' });
      const op = ops.getByRole('listitem').filter({ hasText: 'Make a copy' });
      await op.getByText('Done').waitFor({ timeout: 30_000 });
      await op.getByText('made one copy').waitFor();
      await op.getByRole('link', { name: 'notes.made.txt' }).waitFor();
      await list.getByRole('option', { name: /notes\.made\.txt/ }).waitFor({ timeout: 15_000 });
      assert.equal(readFileSync(join(srv.dataDir, 'notes.made.txt'), 'utf8'), 'fancy: Carpe diem / hello notes');
      await shot(page, 'apps-job-done');

      // The toolbar's Apps menu offers the same actions for the selection; a panel view opens beside the listing.
      await list.getByRole('option', { name: /^notes\.txt/ }).click();
      await page.getByRole('button', { name: /^Apps/ }).click();
      await page.getByRole('menuitem', { name: 'Make a copy' }).waitFor();
      await page.getByRole('menuitem', { name: 'Fill at the side' }).click();
      const side = page.getByRole('complementary', { name: 'Fill in the form' });
      await side.getByRole('radio', { name: 'Fancy' }).waitFor();
      await side.getByRole('button', { name: 'Close the app panel' }).click();
      await side.waitFor({ state: 'detached' });

      // Page placement: the view at its own route; a job started there returns to the folder.
      await page.goto(`${srv.url}/app/forms/fill?path=${encodeURIComponent('/home/notes.txt')}`);
      await page.getByRole('heading', { name: 'Fill in the form', level: 1 }).waitFor();
      await page.getByRole('button', { name: 'Make it' }).click();
      await page.waitForURL(/\/files\/home$/);
      await page.getByRole('region', { name: 'Operations' }).getByRole('listitem').filter({ hasText: 'Make a copy' }).filter({ hasText: 'Done' }).nth(1).waitFor({ timeout: 30_000 });
      await list.getByRole('option', { name: /notes\.made\.txt/ }).waitFor();
      assert.equal(readFileSync(join(srv.dataDir, 'notes.made.txt'), 'utf8'), 'plain:  / hello notes');
      assert.deepEqual(errors.filter((e) => !/status of (400|422)/.test(e)), [], errors.join('\n'));
    } finally {
      await ctx.close();
    }
  });

  test('in Turkish: the app\'s own Turkish labels in the menus, the form\'s hints in Turkish', async () => {
    const ctx = await desktopContext(browser, { locale: 'tr-TR' });
    try {
      const { page } = await newPage(ctx);
      await signIn(page, srv.url);
      await page.goto(`${srv.url}/files/home`);
      const row = page.getByTestId('file-list').getByRole('option', { name: /^notes\.txt/ });
      await row.click();
      await row.click({ button: 'right' });
      await page.getByRole('menuitem', { name: 'Yanda doldur' }).waitFor();
      await page.getByRole('menuitem', { name: 'Kopya doldur' }).click();
      const dialog = page.getByRole('dialog', { name: 'Fill in the form' }); // the app's own surface text
      await dialog.getByRole('radio', { name: 'Fancy' }).click();
      const submitted = page.waitForResponse((r) => r.url().includes('/views/forms/fill/event'));
      await dialog.getByRole('button', { name: 'Make it' }).click();
      assert.equal((await submitted).status(), 422);
      await dialog.locator('.app-field', { has: page.getByLabel(/^Motto/) }).getByText('Zorunlu').waitFor();
      await dialog.getByRole('button', { name: 'Kapat' }).click();
      await page.getByRole('button', { name: /^Uygulamalar/ }).waitFor();
    } finally {
      await ctx.close();
    }
  });
});

/**
 * A FAKE of the public app-link routes (SPEC App plugins, "Public pages of
 * apps"), only to drive the page until branch apps-public lands: PIN 2468
 * (3 tries), a surface with a required field, 202 on submit; token `gone` is revoked.
 */
function fakePublicServer(): Promise<{ url: string; server: Server; events: unknown[] }> {
  const dist = join(root, 'dist/renderer');
  const events: unknown[] = [];
  let unlocked = false;
  let tries = 3;
  const json = (res: import('node:http').ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const surface = {
    title: 'Sign the form',
    nodes: [
      { type: 'text', text: 'Please sign <b>here</b>' },
      { type: 'form', fields: [{ key: 'name', type: 'string', label: 'Your name', required: true }] },
      { type: 'signature-pad', key: 'sig', label: 'Signature' },
    ],
    footer: [{ id: 'send', label: 'Send', primary: true }],
    state: { step: 1 },
  };
  const server = createServer(async (req, res) => {
    const url = new URL(req.url!, 'http://x');
    let body = '';
    for await (const c of req) body += c;
    const m = /^\/api\/public\/s\/([^/]+)(\/.*)?$/.exec(url.pathname);
    if (url.pathname === '/favicon.ico') return void res.writeHead(204).end();
    if (m) {
      const [, token, tail = ''] = m;
      if (token === 'gone') return json(res, tail === '' ? 200 : 410, tail === '' ? { revoked: true } : { error: 'gone', message: 'This link was revoked.' });
      if (tail === '' && req.method === 'GET') return json(res, 200, { kind: 'app', requires_pin: true, ...(unlocked && { app: { plugin: 'sign', page: 'form', title: 'Signing', files: [{ ref: 'f1', name: 'contract.pdf', size: 10, mime: 'application/pdf' }] } }) });
      if (tail === '/pin') {
        if (JSON.parse(body || '{}').pin === '2468') {
          unlocked = true;
          return json(res, 200, { ok: true });
        }
        tries--;
        return json(res, 401, { error: 'pin_wrong', message: 'Wrong PIN.', details: { tries_left: tries }, params: { tries_left: tries } });
      }
      if (tail === '/event') {
        if (!unlocked) return json(res, 401, { error: 'unauthorised', message: 'PIN needed', details: { reason: 'pin_required' } });
        const b = JSON.parse(body || '{}');
        events.push(b);
        if (!b.event) return json(res, 200, { surface });
        const data = b.data ?? {};
        if (!data.name) return json(res, 422, { error: 'required', message: 'Fill in: name', details: { fields: ['name'], required: ['name'], reasons: { name: 'required' } } });
        return json(res, 202, { accepted: true, job_id: 'op_fake' });
      }
      return json(res, 404, { error: 'not_found', message: 'Not found' });
    }
    const file = url.pathname.startsWith('/s/') ? 'app-page.html' : normalize(url.pathname).replace(/^\/+/, '');
    const p = join(dist, file);
    if (!p.startsWith(dist) || !existsSync(p)) return json(res, 404, { error: 'not_found', message: 'Not found' });
    const types: Record<string, string> = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.svg': 'image/svg+xml' };
    // A strict policy on the page (no inline script or style element): a violation would be a console error.
    const csp = extname(p) === '.html' ? { 'content-security-policy': "default-src 'self'; img-src 'self' data:; style-src 'self'; base-uri 'none'; frame-ancestors 'none'" } : {};
    res.writeHead(200, { 'content-type': types[extname(p)] ?? 'application/octet-stream', ...csp });
    res.end(readFileSync(p));
  });
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r({ url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, server, events })));
}

describe('the public app page (fake public routes)', { skip, timeout: 120_000 }, () => {
  let fake: Awaited<ReturnType<typeof fakePublicServer>>;
  let browser: Browser;
  before(async () => {
    ensureRendererBuilt();
    assert.ok(existsSync(join(root, 'dist/renderer/app-page.html')), 'the Vite build writes app-page.html');
    fake = await fakePublicServer();
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    fake?.server.closeAllConnections();
    fake?.server.close();
  });

  test('PIN, the surface (text escaped), a refused and an accepted submit; a revoked link', async () => {
    const ctx = await desktopContext(browser);
    try {
      const { page, errors } = await newPage(ctx);
      await page.goto(`${fake.url}/s/tok123`);
      const pin = page.getByLabel('PIN');
      await pin.fill('1111');
      await page.getByRole('button', { name: 'Open' }).click();
      await page.getByText('Wrong PIN. Tries left: 2.').waitFor();
      await pin.fill('2468');
      await page.getByRole('button', { name: 'Open' }).click();
      await page.getByRole('heading', { name: 'Sign the form' }).waitFor();
      await page.getByText('Please sign <b>here</b>').waitFor(); // text, never markup
      assert.equal(await page.locator('.app-public b').count(), 0);
      await page.getByRole('link', { name: 'contract.pdf' }).waitFor();
      assert.match((await page.getByRole('link', { name: 'contract.pdf' }).getAttribute('href'))!, /\/api\/public\/s\/tok123\/file\/f1$/);

      await page.getByRole('button', { name: 'Send' }).click();
      await page.locator('.app-field', { has: page.getByLabel(/^Your name/) }).getByText('Required').waitFor();
      await page.getByLabel(/^Your name/).fill('Ada');
      const pad = page.getByRole('img', { name: 'Signature' });
      const box = (await pad.boundingBox())!;
      await page.mouse.move(box.x + 20, box.y + 20);
      await page.mouse.down();
      await page.mouse.move(box.x + 120, box.y + 60, { steps: 5 });
      await page.mouse.up();
      await page.getByRole('button', { name: 'Send' }).click();
      await page.getByText('Thank you: your answer was sent.').waitFor();
      const last = fake.events.at(-1) as { event: string; action_id: string; state: unknown; data: Record<string, string> };
      assert.deepEqual([last.event, last.action_id, last.state, last.data.name], ['submit', 'send', { step: 1 }, 'Ada']);
      assert.match(last.data.sig, /^data:image\/png;base64,/);
      assert.deepEqual(fake.events[0], {}, 'the page opens with an empty event body');
      await shot(page, 'apps-public-sent');

      await page.goto(`${fake.url}/s/gone`);
      await page.getByText('This link was revoked.').waitFor();
      assert.deepEqual(errors.filter((e) => !/status of (401|410|422)/.test(e)), [], errors.join('\n'));
    } finally {
      await ctx.close();
    }
  });
});
