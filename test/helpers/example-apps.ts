/**
 * Installs the example apps of examples/ (images-to-pdf, fill-and-sign) into a
 * running test server the way an admin does (examples/README.md): a throwaway
 * Ed25519 publisher key made here (never written to disk), trusted through
 * `POST /api/admin/app-plugins/keys`, then each app built by
 * scripts/build-example-apps.ts, signed with it and uploaded as a ZIP.
 * For HTTP tests and, later, the browser end-to-end tests of these apps.
 */
import { generateKeyPairSync } from 'node:crypto';
import { buildExampleApp, EXAMPLE_APPS, publicPem, type ExampleApp } from '../../scripts/build-example-apps';
import type { TestServer } from './server';

export const EXAMPLE_PUBLISHER = 'filedock-examples';

/** Built packages, by app (bundling pdf-lib takes a moment: one build per test process and key). */
const built = new Map<string, Promise<Buffer>>();

export interface InstalledExamples {
  publisher: string;
  public_key_pem: string;
  sizes: Record<string, number>;
}

export async function installExampleApps(
  s: Pick<TestServer, 'api'>,
  adminToken: string,
  apps: readonly ExampleApp[] = EXAMPLE_APPS,
): Promise<InstalledExamples> {
  const { privateKey } = generateKeyPairSync('ed25519');
  const pem = publicPem(privateKey);
  const k = await s.api('POST', '/api/admin/app-plugins/keys', { token: adminToken, body: { publisher: EXAMPLE_PUBLISHER, public_key_pem: pem } });
  if (k.status !== 201) throw new Error(`trusting the publisher key failed: ${k.status} ${JSON.stringify(k.body)}`);
  const sizes: Record<string, number> = {};
  for (const app of apps) {
    const cacheKey = `${app}\n${pem}`;
    if (!built.has(cacheKey)) built.set(cacheKey, buildExampleApp(app, EXAMPLE_PUBLISHER, privateKey));
    const zip = await built.get(cacheKey)!;
    sizes[app] = zip.length;
    const r = await s.api('POST', '/api/admin/app-plugins/apps', {
      token: adminToken,
      raw: new Uint8Array(zip),
      headers: { 'content-type': 'application/zip' },
    });
    if (r.status !== 201) throw new Error(`installing ${app} failed: ${r.status} ${JSON.stringify(r.body)}`);
  }
  return { publisher: EXAMPLE_PUBLISHER, public_key_pem: pem, sizes };
}

/** Polls a plugin op (`GET /api/files/ops/{id}`) until it is `ok`, `failed` or `cancelled`; `onRow` sees every row read. */
export async function waitForPluginOp(
  s: Pick<TestServer, 'api'>,
  token: string,
  id: string,
  opts: { timeoutMs?: number; everyMs?: number; onRow?: (row: any) => void } = {},
): Promise<any> {
  const until = Date.now() + (opts.timeoutMs ?? 120_000);
  while (Date.now() < until) {
    const r = await s.api('GET', `/api/files/ops/${id}`, { token });
    if (r.status !== 200) throw new Error(`op ${id}: ${r.status} ${JSON.stringify(r.body)}`);
    opts.onRow?.(r.body);
    if (['ok', 'failed', 'cancelled'].includes(r.body.status)) return r.body;
    await new Promise((res) => setTimeout(res, opts.everyMs ?? 25));
  }
  throw new Error(`op ${id} did not finish`);
}
