/**
 * The tray's lines come from the server itself: a real server forked with an
 * IPC channel (as the desktop host runs it) reports its uplink budget, its
 * governor on battery and its (no) offline storages right after `ready`,
 * each once until it changes (docs/server-host-protocol.md).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnServer } from '../helpers/child-server';
import { tempDir } from '../helpers/tools';

test('uplink, governor and storages host messages after ready, not repeated while nothing changes', { timeout: 60_000 }, async () => {
  const data = tempDir('filedock-host-lines-');
  const srv = await spawnServer({ SERVICE_DATA_DIR: data.dir, SERVICE_PUBLIC_EGRESS_MBPS: '8', SERVICE_POWER_STATE: 'battery' });
  try {
    const of = (type: string) => srv.messages().filter((m) => m.type === type);
    for (let i = 0; i < 100 && (of('uplink').length === 0 || of('governor').length === 0 || of('storages').length === 0); i++)
      await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(of('uplink')[0], { type: 'uplink', egress_mbps: 0, budget_mbps: 8, suspended_links: 0, budgets: [] });
    assert.equal(of('governor')[0].lanes, 1, 'battery: one lane');
    assert.equal(of('governor')[0].on_battery, true);
    assert.deepEqual(of('storages')[0], { type: 'storages', offline: [] });
    await new Promise((r) => setTimeout(r, 2500));
    assert.equal(of('uplink').length, 1, 'unchanged: not sent again');
    assert.equal(of('storages').length, 1);
  } finally {
    await srv.stop();
    data.cleanup();
  }
});
