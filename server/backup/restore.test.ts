/**
 * What restore refuses before it writes anything, on archives made by hand
 * with the project's ZIP writer: not a ZIP, no manifest, a name that would
 * leave the data folder, an entry the manifest does not list, a size that
 * does not match; and a good one restored with its modes.
 */
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createWriteStream, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { ZipWriter } from '../lib/zip-writer';
import { tempDir } from '../../test/helpers/tools';
import { currentSchema } from './manifest';
import { restoreBackup, RestoreRefused } from './restore';

const t = tempDir('filedock-restore-');
after(() => t.cleanup());
let n = 0;

/** Writes a ZIP of `files`, plus a manifest listing `listed` (default: every file, with true sums). */
async function archive(files: Record<string, string>, edit: (m: any) => void = () => {}): Promise<string> {
  const file = join(t.dir, `a${++n}.zip`);
  const out = createWriteStream(file);
  const closed = new Promise<void>((r) => out.once('close', () => r()));
  const zip = new ZipWriter(out);
  const entries = Object.entries(files).map(([name, text]) => ({
    name,
    size: Buffer.byteLength(text),
    sha256: createHash('sha256').update(text).digest('hex'),
    mode: name === 'secret.key' ? 0o600 : 0o644,
  }));
  const m = { format_version: 1, filedock_version: '9.9.9', schema: currentSchema(), database: 'sqlite', created_at: new Date().toISOString(), entries };
  edit(m);
  for (const [name, text] of [...Object.entries(files), ['manifest.json', JSON.stringify(m)]]) {
    await zip.addFile(name, Readable.from([Buffer.from(text)]), { size: Buffer.byteLength(text), mtime: Date.now(), compress: true });
  }
  await zip.finish();
  await closed;
  return file;
}

const refused = (reason: RestoreRefused['reason'], message: RegExp) => (e: unknown) =>
  e instanceof RestoreRefused && e.reason === reason && message.test(e.message);

describe('restoreBackup', () => {
  const good = { 'database.sqlite': 'db bytes', 'secret.key': 'key', 'state/sftp_host_ed25519_key': 'host key' };

  test('refuses what is not a backup, and writes nothing', async () => {
    const junk = join(t.dir, 'junk.zip');
    writeFileSync(junk, 'not a zip at all');
    await assert.rejects(restoreBackup(junk, join(t.dir, 'r0')), refused('invalid', /not a readable backup archive/));
    await assert.rejects(restoreBackup(await archive(good, (m) => delete m.entries), join(t.dir, 'r0')), refused('invalid', /lacks/));
    await assert.rejects(
      restoreBackup(await archive(good, (m) => (m.entries[2].name = 'state/../../escape')), join(t.dir, 'r0')),
      refused('invalid', /bad entry/),
    );
    await assert.rejects(
      restoreBackup(await archive(good, (m) => m.entries.pop()), join(t.dir, 'r0')),
      refused('checksum', /does not list: state\/sftp_host_ed25519_key/),
    );
    await assert.rejects(
      restoreBackup(await archive(good, (m) => (m.entries[1].size = 4)), join(t.dir, 'r0')),
      refused('checksum', /secret\.key does not match/),
    );
    await assert.rejects(restoreBackup(await archive(good, (m) => (m.format_version = 2)), join(t.dir, 'r0')), refused('schema_newer', /format 2 is newer/));
    await assert.rejects(
      restoreBackup(await archive(good, (m) => (m.schema = '19990101000000-unknown')), join(t.dir, 'r0')),
      refused('schema_newer', /not one this build knows/),
    );
    assert.equal(existsSync(join(t.dir, 'r0')), false);
  });

  test('restores a good archive: the database under its usual name, modes kept', async () => {
    const dest = join(t.dir, 'r1');
    const m = await restoreBackup(await archive(good), dest);
    assert.equal(m.entries.length, 3);
    assert.equal(readFileSync(join(dest, 'filedock.sqlite'), 'utf8'), 'db bytes');
    assert.equal(statSync(join(dest, 'secret.key')).mode & 0o777, 0o600);
    assert.equal(readFileSync(join(dest, 'state/sftp_host_ed25519_key'), 'utf8'), 'host key');
    await assert.rejects(restoreBackup(await archive(good), dest), refused('not_empty', /is not empty \(3 entries\)/));
  });
});
