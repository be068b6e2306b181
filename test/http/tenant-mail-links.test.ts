/**
 * Links sent under a tenant (docs/tenants.md, "Step 4: the leftovers"): a share-mail carries the tenant's own
 * address (its first host name with the installation's scheme and port, else the installation's address and
 * `/t/<slug>`), even with `SERVICE_PUBLIC_URL` set, and the link in the mail opens through the real server.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SMTPServer } from 'smtp-server';
import { startTestServer, type TestServer } from '../helpers/server';
import { addTenantRow, onHost } from '../helpers/tenants';
import { tempDir } from '../helpers/tools';

const ADMIN = { email: 'sam@example.test', password: 'same-password-1' };
const HOST = 'hosted.example.test';
let s: TestServer;
let smtp: SMTPServer;
let port: number;
const mails: string[] = [];
const roots: Array<{ cleanup: () => void }> = [];

/** A free loopback port: the public URL names the port the server will listen on. */
const freePort = () =>
  new Promise<number>((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const p = (srv.address() as { port: number }).port;
      srv.close(() => resolve(p));
    });
  });

before(async () => {
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onData(stream, _session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        // Quoted-printable: a long address may be wrapped.
        mails.push(
          Buffer.concat(chunks)
            .toString('utf8')
            .replace(/=\r?\n/g, '')
            .replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(Number.parseInt(h, 16))),
        );
        cb();
      });
    },
  });
  await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', () => r()));
  port = await freePort();
  s = await startTestServer({
    SERVICE_MULTI_TENANT: '1',
    SERVICE_PORT: String(port),
    SERVICE_PUBLIC_URL: `http://127.0.0.1:${port}`,
    SERVICE_SMTP_HOST: '127.0.0.1',
    SERVICE_SMTP_PORT: String((smtp.server.address() as { port: number }).port),
    SERVICE_SMTP_SECURE: 'none',
    SERVICE_SMTP_FROM: 'links@example.test',
  });
});
after(async () => {
  await s?.close();
  await new Promise<void>((r) => smtp.close(() => r()));
  for (const r of roots) r.cleanup();
});

/** A tenant with an admin and a storage `Docs` holding `a.txt`; answers a request function as its admin. */
async function tenant(slug: string, hostnames: string[]) {
  const id = await addTenantRow(s, slug, hostnames);
  await s.server.services.auth.users.create({ tenant_id: id }, { ...ADMIN, role: 'admin' });
  const root = tempDir(`filedock-mail-${slug}-`);
  roots.push(root);
  writeFileSync(join(root.dir, 'a.txt'), `${slug} text`);
  const on: On = hostnames.length
    ? onHost(s, hostnames[0])
    : (method: string, path: string, o: { token?: string; body?: unknown } = {}) => s.api(method, `/t/${slug}${path}`, o);
  const token = (await on('POST', '/api/auth/login', { body: ADMIN })).body.token as string;
  const st = await on('POST', '/api/admin/storages', { token, body: { name: 'Docs', driver: 'local', rbac_enabled: false, config: { path: root.dir } } });
  assert.equal(st.status, 200, JSON.stringify(st.body));
  return { on, token };
}

type On = (method: string, path: string, o?: { token?: string; body?: unknown }) => Promise<{ status: number; body: any }>;

/** Shares `path`, mails the link, and answers the link's token and the address the mail carries. */
async function mailed(t: { on: On; token: string }, to: string, path = '/Docs/a.txt'): Promise<{ token: string; sent: string }> {
  const link = await t.on('POST', '/api/files/share', { token: t.token, body: { path } });
  assert.equal(link.status, 200, JSON.stringify(link.body));
  const r = await t.on('POST', '/api/files/permissions/share-mail', { token: t.token, body: { id: link.body.id, emails: [to] } });
  assert.deepEqual([r.status, r.body.sent], [200, [to]], JSON.stringify(r.body));
  const until = Date.now() + 10_000;
  let mail: string | undefined;
  while (!(mail = mails.find((m) => m.includes(link.body.token))) && Date.now() < until) await new Promise((res) => setTimeout(res, 20));
  assert.ok(mail, `a mail for ${to}`);
  const sent = new RegExp(`https?://\\S*/s/${link.body.token}`).exec(mail)?.[0];
  assert.ok(sent, mail);
  return { token: link.body.token, sent };
}

test('a share-mail from a tenant with a host name carries that host with the installation’s scheme and port, and opens', async () => {
  const { token, sent } = await mailed(await tenant('hosted', [HOST]), 'one@example.test');
  assert.equal(sent, `http://${HOST}:${port}/s/${token}`);
  // The real server, reached as the recipient's browser would (the host name resolves to it).
  const page = await onHost(s, HOST)('GET', new URL(sent).pathname);
  assert.equal(page.status, 200, String(page.body).slice(0, 200));
  assert.equal((await fetch(`${s.url}/s/${token}`)).status, 404, 'the installation’s own address does not know it');
});

test('a share-mail from a tenant with only its prefix carries the installation’s address and /t/<slug>, and opens', async () => {
  const { token, sent } = await mailed(await tenant('plain', []), 'two@example.test');
  assert.equal(sent, `http://127.0.0.1:${port}/t/plain/s/${token}`);
  assert.equal((await fetch(sent)).status, 200);
});

test('tenant 1’s share-mail is unchanged: the installation’s address', async () => {
  const admin = await s.login();
  const root = tempDir('filedock-mail-own-');
  roots.push(root);
  writeFileSync(join(root.dir, 'a.txt'), 'own text');
  const st = await s.api('POST', '/api/admin/storages', {
    token: admin,
    body: { name: 'Own', driver: 'local', rbac_enabled: false, config: { path: root.dir } },
  });
  assert.equal(st.status, 200, JSON.stringify(st.body));
  const { token, sent } = await mailed({ on: (m, p, o) => s.api(m, p, o), token: admin }, 'three@example.test', '/Own/a.txt');
  assert.equal(sent, `http://127.0.0.1:${port}/s/${token}`);
  assert.equal((await fetch(sent)).status, 200);
});
