import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TenantDirectory } from './tenant-directory';
import type { TenantRecord, TenantRecordsRepo } from './tenant-records.repo';

const record = (id: number, slug: string, hostnames: string[]): TenantRecord => ({
  id,
  slug,
  name: slug,
  hostnames,
  status: 'active',
  quotas: {},
  branding: {},
  created_at: '2026-12-07T00:00:00.000Z',
});

test('a tenant’s address for links sent elsewhere: its first host name, else the prefix; tenant 1 keeps the installation’s', async () => {
  const rows = [record(1, 'default', []), record(2, 'hosted', ['Files.Hosted.test', 'other.test']), record(3, 'plain', [])];
  const dir = new TenantDirectory({ all: async () => rows } as unknown as TenantRecordsRepo);
  await dir.load();
  const at = 'https://files.example.net:8443';
  assert.equal(dir.address({ tenant_id: 1 }, at), at);
  assert.equal(dir.address({ tenant_id: 2 }, at), 'https://files.hosted.test:8443', 'the scheme and port of the installation');
  assert.equal(dir.address({ tenant_id: 2 }, 'http://files.example.net'), 'http://files.hosted.test', 'no port when the installation has none');
  assert.equal(dir.address({ tenant_id: 3 }, at), `${at}/t/plain`);
  // No public URL and no request (the assistant without SERVICE_PUBLIC_URL): a relative address still opens in the tenant.
  assert.equal(dir.address({ tenant_id: 2 }, ''), '/t/hosted');
  assert.equal(dir.address({ tenant_id: 9 }, at), at, 'a tenant it does not know (deleted)');
});
