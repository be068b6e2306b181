/**
 * `service store build DIR --key KEYFILE` (docs/app-store.md, "Running a
 * store"): lists every signed app package (`*.zip`) in DIR in a new
 * index.json, one entry per app id with a version per package (size, sha256,
 * compatibility range, permissions from its manifest), and signs it with the
 * store's Ed25519 key into index.json.sig. The packages stay where they are.
 */
import { createHash, type KeyObject } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { peekAppManifest } from '../plugins';
import { compareVersions } from '../lib/versions';
import { INDEX_FILE, SIGNATURE_FILE, signIndex, STORE_FORMAT, type StoreEntry, type StoreIndex } from './format';

export interface BuiltStore {
  index: StoreIndex;
  fingerprint: string;
}

export async function buildStore(dir: string, key: KeyObject, o: { name?: string; publisherKeys?: Record<string, string> } = {}): Promise<BuiltStore> {
  if (key.asymmetricKeyType !== 'ed25519') throw new Error('the store key must be an Ed25519 private key');
  const entries = new Map<string, StoreEntry>();
  const files = (await readdir(dir)).filter((n) => n.endsWith('.zip')).sort();
  for (const file of files) {
    const bytes = await readFile(join(dir, file));
    let m: Awaited<ReturnType<typeof peekAppManifest>>;
    try {
      m = await peekAppManifest(bytes);
    } catch (e) {
      throw new Error(`${file}: ${(e as Error).message}`);
    }
    const e = entries.get(m.id) ?? {
      id: m.id,
      kind: 'app' as const,
      name: m.name,
      publisher: m.publisher,
      ...(o.publisherKeys?.[m.publisher] && { publisher_key: o.publisherKeys[m.publisher] }),
      description: m.description ? { [m.default_language]: m.description } : {},
      license: m.license?.required ? { model: 'paid' as const, store: m.license.store } : { model: 'free' as const },
      versions: [],
    };
    if (e.versions.some((v) => v.version === m.version)) throw new Error(`${file}: ${m.id} ${m.version} is in the folder twice`);
    e.versions.push({
      version: m.version,
      filedock_range: m.filex_range,
      file,
      size: bytes.length,
      sha256: createHash('sha256').update(bytes).digest('hex'),
      permissions: [...m.permissions],
      ...(m.released && { released: m.released }),
    });
    // The entry's name and description follow its newest version.
    if (e.versions.every((v) => compareVersions(m.version, v.version) >= 0))
      Object.assign(e, { name: m.name, description: m.description ? { [m.default_language]: m.description } : {} });
    entries.set(m.id, e);
  }
  const index: StoreIndex = {
    format: STORE_FORMAT,
    name: o.name ?? 'Filedock store',
    generated_at: new Date().toISOString(),
    entries: [...entries.values()].sort((a, b) => (a.id < b.id ? -1 : 1)),
  };
  const bytes = Buffer.from(`${JSON.stringify(index, null, 2)}\n`);
  const sig = signIndex(bytes, key);
  await writeFile(join(dir, INDEX_FILE), bytes);
  await writeFile(join(dir, SIGNATURE_FILE), sig);
  return { index, fingerprint: JSON.parse(sig).key };
}
