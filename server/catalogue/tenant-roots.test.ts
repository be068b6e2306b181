import { test } from 'node:test';
import assert from 'node:assert/strict';
import { crossTenantRootIssue, type RootedStorage } from './tenant-roots';

const row = (id: number, tenant_id: number, path: string, driver = 'local'): RootedStorage => ({ id, tenant_id, driver, config: JSON.stringify({ path }) });
const rows = [row(1, 1, '/srv/one'), row(2, 2, '/srv/two/files'), row(3, 2, '/srv/bucket', 's3')];
const T1 = { tenant_id: 1 };
const T2 = { tenant_id: 2 };

test("a local root at, inside or above another tenant's local root is refused; within a tenant nothing changes", () => {
  const issue = "overlaps another tenant's storage";
  assert.equal(crossTenantRootIssue(T1, 'local', { path: '/srv/two/files' }, rows), issue, 'the same root');
  assert.equal(crossTenantRootIssue(T1, 'local', { path: '/srv/two/files/x/y' }, rows), issue, 'inside it');
  assert.equal(crossTenantRootIssue(T1, 'local', { path: '/srv/two' }, rows), issue, 'above it');
  assert.equal(crossTenantRootIssue(T1, 'local', { path: '/srv/two/files/../files/deep' }, rows), issue, 'compared resolved');
  assert.equal(crossTenantRootIssue(T2, 'local', { path: '/srv/one/inner' }, rows), issue, 'the other way round');
  assert.equal(crossTenantRootIssue(T1, 'local', { path: '/srv/two/files-b' }, rows), null, 'a sibling sharing a prefix is not inside');
  assert.equal(crossTenantRootIssue(T1, 'local', { path: '/srv/one/inner' }, rows), null, 'its own tenant: the guard does not apply');
  assert.equal(crossTenantRootIssue(T2, 'local', { path: '/srv/two/files/sub' }, rows), null);
  assert.equal(crossTenantRootIssue(T1, 'local', { path: '/srv/bucket' }, rows), null, 'only local roots are compared');
  assert.equal(crossTenantRootIssue(T1, 's3', { bucket: 'b', prefix: 'srv/two' }, rows), null);
  assert.equal(crossTenantRootIssue(T2, 'local', { path: '/srv/one' }, rows, 1), null, 'the storage being changed is not compared with itself');
});
