/**
 * The removal guard of a removable drive must not trust a volume check that
 * looked before the drive went away. A real ext4 image is loop-mounted; the
 * server's volume probe is the real one, wrapped so that one answer (taken
 * while the drive is in) is held back. While it is held, the drive is
 * unplugged and the root folder re-checked: the listing of the bare mount
 * point is empty, and the guard must look again instead of joining the held,
 * stale "attached" verdict. No catalogue row may be removed.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server';
import { LoopVolumes } from '../helpers/loop-volumes';
import { linuxProbe } from '../../server/storage/drivers/local/volume';
import type { MountedVolume, VolumeProbe } from '../../server/storage';
import { DEFAULT_TENANT } from '../../server/db';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const skip = LoopVolumes.unavailable() ?? undefined;

describe('a removable drive unplugged while a volume check is under way', { skip, timeout: 60_000 }, () => {
  let v: LoopVolumes;
  let s: TestServer;
  let m: string;
  let id: number;
  let rowsBefore: string[];
  /** Set: the next answer of `at` is held until `release` is called. */
  let hold: { asked: boolean; release?: () => void } | null = null;
  const probe: VolumeProbe = {
    ...linuxProbe,
    async at(path: string): Promise<MountedVolume> {
      const answer = await linuxProbe.at(path);
      const h = hold;
      if (!h) return answer;
      hold = null;
      h.asked = true;
      await new Promise<void>((r) => (h.release = r));
      return answer;
    },
  };
  const paths = () =>
    (s.server.db.sqlite!.prepare('SELECT path FROM nodes WHERE storage_id = ? ORDER BY path').all(id) as Array<{ path: string }>).map((r) => r.path);

  before(async () => {
    v = new LoopVolumes();
    const img = v.image('stale');
    m = v.folder('m');
    v.mount(img, m);
    writeFileSync(join(m, 'a.txt'), 'on the stick');
    writeFileSync(join(m, 'b.txt'), 'also on the stick');
    // The timer is far off: the only checks are the ones this test starts.
    s = await startTestServer({ SERVICE_VOLUME_CHECK_INTERVAL: '300s', SERVICE_TEXT_INDEX: 'false' }, { volumeProbe: probe });
    const admin = await s.login();
    const made = await s.api('POST', '/api/admin/storages', { token: admin, body: { name: 'USB', driver: 'local', config: { path: m } } });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    id = made.body.id;
    await s.server.catalogue.volumes.tick();
    for (let i = 0; i < 100 && !paths().includes('b.txt'); i++) await sleep(100);
    rowsBefore = paths();
    assert.ok(rowsBefore.includes('a.txt') && rowsBefore.includes('b.txt'), rowsBefore.join());
  });

  after(async () => {
    hold?.release?.();
    await s?.close();
    v?.cleanup();
  });

  test('the folder check that finds the mount point empty removes nothing', async () => {
    const h: { asked: boolean; release?: () => void } = { asked: false };
    hold = h;
    const stale = s.server.catalogue.volumes.tick();
    for (let i = 0; i < 100 && !h.asked; i++) await sleep(20);
    assert.ok(h.asked, 'the held check asked the probe while the drive was in');

    v.unmount(m);
    const check = s.server.catalogue.syncer.refresh(id, '', 10_000);
    // The stale verdict ("attached") comes back while the folder check waits on the guard.
    setTimeout(() => h.release?.(), 300);
    await check;
    await stale;

    assert.deepEqual(paths(), rowsBefore, 'every row kept');
    const st = s.server.catalogue.repo.byId(DEFAULT_TENANT, id)!;
    assert.equal(st.status, 'offline');
    assert.match(st.status_reason ?? '', /not mounted/);
  });
});
