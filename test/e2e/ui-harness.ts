/**
 * What the UI end-to-end tests share: a fresh build of the renderer when the
 * sources are newer than dist/renderer, a real server started from source on
 * port 0 with its own data dir (stopped by PID), and a headless Debian Chromium
 * that records console errors and saves screenshots as test artifacts.
 */
import { after, before } from 'node:test';
import { spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from 'playwright-core';
import { tempDir } from '../helpers/tools';
import { spawnServer } from '../helpers/child-server';

const root = new URL('../..', import.meta.url).pathname;
export const ARTIFACTS = process.env.E2E_ARTIFACTS ?? join(root, 'test-results', 'ui');

function newest(dir: string): number {
  let m = 0;
  for (const n of readdirSync(dir)) {
    // Installed packages are no sources (and a worktree's may be a dangling link).
    if (n === 'node_modules') continue;
    const p = join(dir, n);
    const st = statSync(p);
    m = Math.max(m, st.isDirectory() ? newest(p) : st.mtimeMs);
  }
  return m;
}

/** Builds dist/renderer unless it is newer than every renderer source (about 8 s when it runs). */
export function ensureRendererBuilt(): void {
  const index = join(root, 'dist/renderer/index.html');
  if (existsSync(index) && statSync(index).mtimeMs >= newest(join(root, 'renderer'))) return;
  const r = spawnSync(
    process.execPath,
    [join(root, 'node_modules/vite/bin/vite.js'), 'build', '--config', join(root, 'renderer/vite.config.ts'), '--logLevel', 'error'],
    { cwd: root, stdio: 'inherit' },
  );
  if (r.status !== 0) throw new Error('renderer build failed');
}

export interface RunningServer {
  url: string;
  child: ChildProcess;
  dataDir: string;
  stop: () => Promise<void>;
}

export const ADMIN = { email: 'admin@example.com', password: 'admin-pass-1234' };

/** Starts `service serve` from source with a seeded local storage `home` (holding `files`). */
export async function startServer(env: Record<string, string> = {}): Promise<RunningServer> {
  const { dir, cleanup } = tempDir('filedock-ui-');
  const storeDir = join(dir, 'store');
  mkdirSync(storeDir, { recursive: true });
  const srv = await spawnServer({
    SERVICE_DATA_DIR: join(dir, 'data'),
    SERVICE_ADMIN_EMAIL: ADMIN.email,
    SERVICE_ADMIN_PASSWORD: ADMIN.password,
    SERVICE_DEFAULT_STORAGE_DRIVER: 'local',
    SERVICE_DEFAULT_STORAGE_NAME: 'home',
    SERVICE_DEFAULT_STORAGE_PATH: storeDir,
    ...env,
  });
  return {
    url: srv.url,
    child: srv.child,
    dataDir: storeDir,
    stop: async () => {
      await srv.stop();
      cleanup();
    },
  };
}

/**
 * Debian's Chromium, headless. `extraArgs` add to its switches, e.g. `--host-resolver-rules=MAP alpha.test
 * 127.0.0.1` so that a tenant's host name reaches the test server on loopback.
 */
export async function launchBrowser(extraArgs: string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      ...extraArgs,
    ],
  });
}

/** A page that collects console errors and uncaught exceptions into `errors`. */
export async function newPage(ctx: BrowserContext): Promise<{ page: Page; errors: string[] }> {
  const page = await ctx.newPage();
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  return { page, errors };
}

/** Saves `test-results/ui/<name>.png`. */
export async function shot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const p = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path: p });
  return p;
}

/** A desktop-sized browser context, English unless `opts` say otherwise. */
export const desktopContext = (browser: Browser, opts: BrowserContextOptions = {}): Promise<BrowserContext> =>
  browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'en-US', ...opts });

/** A fresh desktop context with a page signed in as `who`; `errors` starts empty after the sign-in. */
export async function signedInPage(
  browser: Browser,
  base: string,
  who = ADMIN,
  opts: BrowserContextOptions = {},
): Promise<{ ctx: BrowserContext; page: Page; errors: string[] }> {
  const ctx = await desktopContext(browser, opts);
  const { page, errors } = await newPage(ctx);
  await signIn(page, base, who);
  errors.length = 0; // the signed-out first load's session probe answers 401
  return { ctx, page, errors };
}

/**
 * A suite's server, browser and signed-in admin page, started in `before` and closed in `after`: the
 * returned object's fields are set once `before` has run.
 */
export function signedInSuite(opts: BrowserContextOptions = {}): { srv: RunningServer; browser: Browser; ctx: BrowserContext; page: Page; errors: string[] } {
  const s = {} as ReturnType<typeof signedInSuite>;
  before(async () => {
    ensureRendererBuilt();
    s.srv = await startServer();
    s.browser = await launchBrowser();
    Object.assign(s, await signedInPage(s.browser, s.srv.url, undefined, opts));
  });
  after(async () => {
    await s.browser?.close();
    await s.srv?.stop();
  });
  return s;
}

/** JSON API calls with a bearer token (read when called, so a suite may sign in later). */
export const bearerApi =
  (base: () => string, token: () => string) =>
  async (method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> => {
    const r = await fetch(base() + path, {
      method,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token()}` },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: r.status, body: await r.json() };
  };

/** Signs in through the form and waits for the shell. */
export async function signIn(page: Page, base: string, who = ADMIN): Promise<void> {
  await page.goto(`${base}/files`);
  await page.getByLabel(/E-mail or username|E-posta veya kullanıcı adı/).fill(who.email);
  await page.getByLabel(/^(Password|Parola)$/).fill(who.password);
  await page.getByRole('button', { name: /^(Sign in|Oturum aç)$/ }).click();
  // Attached, not visible: on a phone the button sits in the header's folded menu.
  await page.getByRole('button', { name: /Sign out|Oturumu kapat/, includeHidden: true }).waitFor({ state: 'attached' });
}

/** A row of the file list by its file name (the row's accessible name starts with its icon, then the name). */
export const fileRow = (page: Page, name: string) =>
  page.getByTestId('file-list').getByRole('option', { name: new RegExp(`^\\S*\\s*${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`) });
