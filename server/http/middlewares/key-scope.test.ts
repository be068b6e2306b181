import { test } from 'node:test';
import assert from 'node:assert/strict';
import { keyRule } from './key-scope';

test('the route table: each route needs the verb it should, and anything unlisted needs a session', () => {
  const cases: Array<[string, string, string]> = [
    ['GET', '/api/auth/me', 'any'],
    ['PATCH', '/api/auth/me', 'session'],
    ['GET', '/api/capabilities', 'any'],
    ['GET', '/api/files/capabilities', 'any'],
    ['GET', '/api/files/manager', 'files:read'],
    ['HEAD', '/api/files/raw', 'files:read'],
    ['POST', '/api/files/manager', 'files:write'],
    ['POST', '/api/files/upload/init', 'files:write'],
    ['POST', '/api/files/archive/list', 'files:read'],
    ['POST', '/api/files/archive/extract', 'files:write'],
    ['POST', '/api/files/refresh', 'files:read'],
    ['POST', '/api/files/share', 'shares:write'],
    ['GET', '/api/files/share', 'shares:write'],
    ['DELETE', '/api/files/share/5', 'shares:write'],
    ['POST', '/api/files/permissions/share-mail', 'shares:write'],
    ['GET', '/api/events/stream', 'files:read'],
    ['POST', '/api/notifications/read', 'files:read'],
    ['GET', '/api/admin/users', 'admin'],
    ['GET', '/api/admin/plugins', 'session'],
    ['POST', '/api/admin/app-plugins/x', 'session'],
    ['POST', '/api/admin/app-store/install', 'session'],
    ['GET', '/api/admin/store-connections', 'session'],
    ['POST', '/api/mcp', 'ai.use'],
    ['POST', '/api/ai/chat', 'ai.use'],
    ['POST', '/api/files/assistant/chat', 'session'],
    ['GET', '/api/files/assistant', 'session'],
    ['PATCH', '/api/admin/assistant', 'admin'],
    ['GET', '/api/auth/keys', 'session'],
    ['POST', '/api/auth/logout', 'session'],
    ['GET', '/api/auth/sessions', 'session'],
    ['POST', '/api/auth/mfa/totp/setup', 'session'],
    ['POST', '/api/auth/desktop/complete', 'session'],
    ['GET', '/api/something-new', 'session'],
    ['GET', '/api/filesystem', 'session'],
    ['GET', '/api/adminx', 'session'],
  ];
  for (const [method, path, want] of cases) assert.equal(keyRule(method, path), want, `${method} ${path}`);
});
