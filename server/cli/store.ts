/**
 * `service store keygen|build|verify|license|revoke` (docs/app-store.md, "Running a store"):
 * make a store key, sign a folder of app packages as a store, check a store, sell and revoke licences.
 * Nothing here opens the database or needs the configuration.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { buildStore, fingerprint, issueLicence, revokeLicences, verifyStore } from '../store';
import { parse, UsageError } from './args';

const USAGE = `
Usage:
  service store keygen FILE                  write a new Ed25519 store key (private, mode 0600) and print its public key
  service store build DIR --key FILE [--name NAME] [--publisher-key NAME=PEMFILE ...]
                                             write DIR/index.json and DIR/index.json.sig for the packages (*.zip) in DIR
  service store verify URL --key FILE        check a store: its signature against the key (public or private PEM)
                                             and every package's and picture's size and sha256
  service store license DIR --key FILE --store NAME --app ID --licensee NAME [--seats N] [--valid-until ISO] [--updates-until ISO]
                                             issue a licence into DIR/licenses/ and print its purchase code (give it to the buyer)
  service store revoke DIR --key FILE LICENCE_ID ...
                                             add licence ids to DIR/revocations.json and sign it`;

const publicPem = (file: string) => createPublicKey(readFileSync(file)).export({ type: 'spki', format: 'pem' }).toString();

export async function storeCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  const { values, positionals } = parse(
    rest,
    {
      key: { type: 'string' },
      name: { type: 'string' },
      'publisher-key': { type: 'string', multiple: true },
      store: { type: 'string' },
      app: { type: 'string' },
      licensee: { type: 'string' },
      seats: { type: 'string' },
      'valid-until': { type: 'string' },
      'updates-until': { type: 'string' },
    },
    USAGE,
  );
  const target = positionals[0];
  if (!target) throw new UsageError(USAGE.trim());
  switch (sub) {
    case 'keygen': {
      if (existsSync(target)) throw new UsageError(`${target} exists; not replacing a key`);
      const { privateKey } = generateKeyPairSync('ed25519');
      writeFileSync(target, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
      const pem = createPublicKey(privateKey).export({ type: 'spki', format: 'pem' }).toString();
      console.log(`store key written to ${target} (keep it secret)\nfingerprint ${fingerprint(pem)}\n${pem.trim()}`);
      return 0;
    }
    case 'build': {
      if (!values.key) throw new UsageError(`--key is required\n${USAGE}`);
      const publisherKeys: Record<string, string> = {};
      for (const pk of values['publisher-key'] ?? []) {
        const [name, file] = pk.split('=');
        if (!name || !file) throw new UsageError(`--publisher-key NAME=PEMFILE, not ${pk}`);
        publisherKeys[name] = publicPem(file);
      }
      const built = await buildStore(target, createPrivateKey(readFileSync(values.key)), { name: values.name, publisherKeys });
      const versions = built.index.entries.reduce((n, e) => n + e.versions.length, 0);
      console.log(`${target}: index.json with ${built.index.entries.length} entries (${versions} packages), signed by ${built.fingerprint}`);
      return 0;
    }
    case 'verify': {
      if (!values.key) throw new UsageError(`--key is required\n${USAGE}`);
      const r = await verifyStore(target, publicPem(values.key));
      console.log(`${r.name}: signature good (${r.fingerprint}); ${r.entries} entries, ${r.files} files`);
      for (const p of r.problems) console.log(`${p.file}: ${p.reason}`);
      if (r.problems.length) console.log(`${r.problems.length} of ${r.files} files do not match the index`);
      return r.problems.length ? 1 : 0;
    }
    case 'license': {
      if (!values.key || !values.store || !values.app || !values.licensee) throw new UsageError(`--key, --store, --app and --licensee are required\n${USAGE}`);
      const seats = values.seats === undefined ? undefined : Number(values.seats);
      if (seats !== undefined && (!Number.isInteger(seats) || seats < 1)) throw new UsageError('--seats is a whole number of at least 1');
      const payload = {
        id: randomUUID(),
        store: values.store,
        app: values.app,
        licensee: values.licensee,
        ...(seats && { seats }),
        ...(values['valid-until'] && { valid_until: values['valid-until'] }),
        ...(values['updates-until'] && { updates_until: values['updates-until'] }),
      };
      const r = await issueLicence(target, createPrivateKey(readFileSync(values.key)), payload);
      console.log(`licence ${payload.id} for ${payload.app} (${payload.licensee}) written to ${r.file}\npurchase code ${r.code}`);
      return 0;
    }
    case 'revoke': {
      if (!values.key || positionals.length < 2) throw new UsageError(`--key and at least one licence id are required\n${USAGE}`);
      const list = await revokeLicences(target, createPrivateKey(readFileSync(values.key)), positionals.slice(1));
      console.log(`${target}/revocations.json lists ${list.revoked.length} revoked licences, signed`);
      return 0;
    }
    default:
      throw new UsageError(USAGE.trim());
  }
}
