/**
 * The size column of an encrypted folder shows each file's true size (docs/vault.md, "Sizes"), read from
 * its first 102 bytes with a ranged GET and decrypted in the page, not the padded ciphertext's length the
 * server lists; against a real server in Debian's Chromium.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { needTool } from '../helpers/tools';
import { formatBytes } from '../../renderer/src/lib/format';
import { cipherSize } from '../../renderer/src/vault/crypto/padding';
import { fileRow, signedInSuite } from './ui-harness';
import { confirmRecoveryKey, createVault, newEncryptedFolder, upload, uploadsDone } from './ui-vault-helpers';

const skip = needTool('chromium', 'chromium') ?? undefined;
const SIZES = { 'tiny.txt': 100, 'letter.txt': 50_000, 'scan.bin': 2_100_000 };

describe('web UI: true sizes in an encrypted folder', { skip, timeout: 300_000 }, () => {
  const s = signedInSuite();

  test('each file shows its plaintext size, not its padded ciphertext size', async () => {
    const { srv, page, errors } = s;
    const work = join(srv.dataDir, '..', 'work');
    mkdirSync(work, { recursive: true });
    for (const [name, size] of Object.entries(SIZES)) writeFileSync(join(work, name), randomBytes(size));
    await createVault(page, srv.url);
    await confirmRecoveryKey(page);
    await newEncryptedFolder(page, 'Box');
    await fileRow(page, 'Box').dblclick();
    await upload(
      page,
      Object.keys(SIZES).map((n) => join(work, n)),
    );
    await uploadsDone(page);
    for (const [name, size] of Object.entries(SIZES)) {
      assert.notEqual(formatBytes(size), formatBytes(cipherSize(size)), `${name}: the two sizes read differently`);
      const cell = fileRow(page, name).locator('.c-size');
      // Shown once its 102 bytes are read (the row does not wait for them).
      await page.waitForFunction(([el, want]) => (el as HTMLElement).textContent === want, [await cell.elementHandle(), formatBytes(size)] as const, {
        timeout: 60_000,
      });
    }
    assert.deepEqual(errors, []);
  });
});
