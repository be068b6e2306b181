import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Multipart } from './multipart';

test('the sweep removes uploads older than a day and unreadable staging, keeps the rest', async () => {
  const root = mkdtempSync(join(tmpdir(), 'filedock-s3mp-'));
  try {
    const now = Date.now();
    const make = (id: string, created: number | null) => {
      mkdirSync(join(root, id));
      writeFileSync(join(root, id, '1.part'), 'x');
      if (created !== null) writeFileSync(join(root, id, 'upload.json'), JSON.stringify({ bucket: 'B', key: 'k', owner: 'o', created }));
    };
    make('fresh', now - 3_600_000);
    make('old', now - 25 * 3_600_000);
    make('broken', null);
    await new Multipart(root).sweep(now);
    assert.deepEqual(readdirSync(root), ['fresh']);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
