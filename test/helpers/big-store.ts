/**
 * A signed store index of `n` made-up entries served on loopback (the issue 33
 * size: 10,000), for the catalogue's size test and bench/app-store.ts. Every
 * tenth entry is a storage driver filed under `storage`; each has 1.0.0 and
 * 1.1.0. Nothing is installable: the packages do not exist.
 */
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { signIndex, STORE_FORMAT } from '../../server/store/format';

export interface BigStore {
  url: string;
  publicKeyPem: string;
  /** index.json's size in bytes. */
  bytes: number;
  server: Server;
}

export async function serveBigStore(n: number): Promise<BigStore> {
  const key = generateKeyPairSync('ed25519').privateKey;
  const entries = Array.from({ length: n }, (_, i) => ({
    id: `app-${i}`,
    kind: i % 10 === 0 ? 'storage' : 'app',
    name: `App ${i}`,
    publisher: 'bench',
    description: { en: `App number ${i}: converts, signs and files documents.` },
    license: { model: 'free' },
    ...(i % 10 === 0 && { categories: ['storage'] }),
    versions: ['1.0.0', '1.1.0'].map((version) => ({
      version,
      filedock_range: '>=0.1.0',
      file: `app-${i}-${version}.zip`,
      size: 1000,
      sha256: 'a'.repeat(64),
      permissions: ['files.read'],
    })),
  }));
  const index = Buffer.from(JSON.stringify({ format: STORE_FORMAT, name: 'Big store', generated_at: new Date().toISOString(), entries }));
  const sig = Buffer.from(signIndex(index, key));
  const server = createServer((req, res) => res.end(req.url === '/index.json' ? index : sig));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/`,
    publicKeyPem: createPublicKey(key).export({ type: 'spki', format: 'pem' }).toString(),
    bytes: index.length,
    server,
  };
}
