import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { openDatabase } from '../db';
import { SettingsStore } from '../settings';
import { tempDir } from '../../test/helpers/tools';
import { AssistantSettings, DEFAULT_LIMITS } from './settings';

test('assistant settings: the key is sealed, never shown, needs a secret key; state follows enabled and configured', async (t) => {
  const d = tempDir();
  t.after(d.cleanup);
  const db = openDatabase(join(d.dir, 'db.sqlite'));
  t.after(() => db.close());
  const store = new SettingsStore(db);
  await store.load();

  const none = new AssistantSettings(store, null);
  await assert.rejects(
    () => none.patch({ api_key: 'sk-1' }),
    (e: any) => e.code === 'assistant_no_secret_key',
  );
  assert.equal(none.state(), 'off');
  assert.deepEqual(none.view().limits, DEFAULT_LIMITS);

  const s = new AssistantSettings(store, randomBytes(32));
  assert.equal((await s.patch({ enabled: true })).configured, false);
  assert.equal(s.state(), 'not_configured');
  const v = await s.patch({ provider: 'anthropic', model: 'm', api_key: 'sk-secret', limits: { per_minute: 5 } });
  assert.equal(v.api_key_set, true);
  assert.equal(s.state(), 'ready');
  assert.doesNotMatch(JSON.stringify(v), /sk-secret/);
  assert.doesNotMatch(JSON.stringify(store.get('assistant')), /sk-secret/);
  assert.equal(s.provider().api_key, 'sk-secret');
  assert.equal(s.read().limits.per_minute, 5);
  assert.equal(s.read().limits.max_steps, DEFAULT_LIMITS.max_steps, 'other limits keep their defaults');
  assert.equal((await s.patch({ api_key: '' })).api_key_set, false);
  assert.equal(s.state(), 'not_configured', 'anthropic needs a key');
});
