/**
 * Files the sync walk finds (not written through the service) get
 * thumbnails on their own, at low priority: pictures, films, sound, PDFs and
 * office documents; other files stay without one until asked (issue: round-one
 * defect 12; office documents: issue 39 item 12).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer } from '../helpers/server';
import { hasTool, tempDir } from '../helpers/tools';
import { buildTemplate } from '../../server/docserver';
import { DEFAULT_TENANT } from '../../server/db';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('pictures a sync finds get thumbnails without a backfill; a later one found by a re-sync too; text files do not', async () => {
  const { dir, cleanup } = tempDir('filedock-sync-thumbs-');
  mkdirSync(join(dir, 'album'));
  for (const [name, r] of [
    ['a.png', 200],
    ['b.jpg', 20],
  ] as const) {
    const img = sharp({ create: { width: 640, height: 480, channels: 3, background: { r, g: 90, b: 140 } } });
    writeFileSync(join(dir, 'album', name), await (name.endsWith('.png') ? img.png() : img.jpeg()).toBuffer());
  }
  writeFileSync(join(dir, 'album', 'notes.txt'), 'no picture');
  const s = await startTestServer({ SERVICE_DEFAULT_STORAGE_DRIVER: 'local', SERVICE_DEFAULT_STORAGE_PATH: dir, SERVICE_DEFAULT_STORAGE_NAME: 'Pics' });
  try {
    const state = (name: string) =>
      (s.server.db.sqlite!.prepare('SELECT thumb_state FROM nodes WHERE name = ?').get(name) as { thumb_state: string | null } | undefined)?.thumb_state;
    const ready = async (names: string[]) => {
      for (let i = 0; i < 400 && !names.every((n) => state(n) === 'ready'); i++) await sleep(50);
      return names.map(state);
    };
    assert.deepEqual(await ready(['a.png', 'b.jpg']), ['ready', 'ready']);
    assert.equal(state('notes.txt'), null, 'a text file found by sync waits for a backfill');

    writeFileSync(
      join(dir, 'album', 'c.png'),
      await sharp({ create: { width: 300, height: 300, channels: 3, background: '#0a0' } })
        .png()
        .toBuffer(),
    );
    const id = s.server.catalogue.repo.byNameOrUid(DEFAULT_TENANT, 'Pics')!.id;
    await s.server.catalogue.syncer.requestSync(id);
    assert.deepEqual(await ready(['c.png']), ['ready']);
  } finally {
    await s.close();
    cleanup();
  }
});

test('an office document a sync finds gets its first-page thumbnail like an upload does (issue 39 item 12)', async (t) => {
  if (!hasTool('soffice') || !hasTool('pdftoppm')) {
    if (process.env.CI) assert.fail('[CI] soffice/pdftoppm not found: install libreoffice-writer-nogui poppler-utils');
    return t.skip('soffice/pdftoppm not found: install libreoffice-writer-nogui poppler-utils');
  }
  const { dir, cleanup } = tempDir('filedock-sync-office-');
  writeFileSync(join(dir, 'found.docx'), await buildTemplate('docx'));
  const s = await startTestServer({ SERVICE_DEFAULT_STORAGE_DRIVER: 'local', SERVICE_DEFAULT_STORAGE_PATH: dir, SERVICE_DEFAULT_STORAGE_NAME: 'Docs' });
  try {
    const state = () =>
      (s.server.db.sqlite!.prepare('SELECT thumb_state FROM nodes WHERE name = ?').get('found.docx') as { thumb_state: string | null } | undefined)
        ?.thumb_state;
    // LibreOffice takes a second or two per document, longer on a loaded machine: a generous bound.
    for (let i = 0; i < 1800 && state() !== 'ready'; i++) await sleep(100);
    assert.equal(state(), 'ready', 'the docx found on disk was thumbnailed without a backfill');
    const token = await s.login();
    const list = await s.api('GET', '/api/files/manager?path=/Docs', { token });
    const entry = list.body.entries.find((e: { name: string }) => e.name === 'found.docx');
    assert.match(entry.thumb_url, /^\/api\/files\/thumb\/\d+\?exp=/);
    const img = await fetch(s.url + entry.thumb_url);
    assert.equal(img.status, 200);
    assert.equal(img.headers.get('content-type'), 'image/jpeg');
  } finally {
    await s.close();
    cleanup();
  }
});
