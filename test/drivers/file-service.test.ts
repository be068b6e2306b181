/**
 * The driver conformance suite, run through the file service: every verb goes
 * through `files.forActor(person)` (access checks, the catalogue, the write
 * gate, the trash and versions) over a local storage of a real server. The
 * same cases then hold for every door built on the file service (the
 * gateways run them through their own protocols).
 */
import { Readable } from 'node:stream';
import { personActor } from '../../server/auth';
import type { ActorFiles } from '../../server/files';
import type { Entry, StorageDriver } from '../../server/storage';
import type { FileEntry, Listing } from '../../server/contract';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';
import { driverConformance } from './conformance';
import { DEFAULT_TENANT } from '../../server/db';

const STORAGE = 'FS';

driverConformance('file service (forActor) over a local storage', async () => {
  const root = tempDir('filedock-fs-conf-');
  const s = await startTestServer({ SERVICE_DEFAULT_STORAGE_DRIVER: 'local', SERVICE_DEFAULT_STORAGE_PATH: root.dir, SERVICE_DEFAULT_STORAGE_NAME: STORAGE });
  const admin = (await s.server.auth.repo.principal(DEFAULT_TENANT, 1))!;
  const driver = actorDriver(s.server.files.forActor(personActor(admin, { ip: '127.0.0.1', ua: 'conformance' })), s);
  return {
    driver,
    async teardown() {
      await s.close();
      root.cleanup();
    },
  };
});

/** The actor-scoped face as a storage driver: paths below the storage, answers as the driver contract words them. */
function actorDriver(fa: ActorFiles, s: TestServer): StorageDriver {
  const p = (rel: string) => (rel === '' ? `/${STORAGE}` : `/${STORAGE}/${rel}`);
  const settle = async (res: { ok: true } | { operation_id: string }) => {
    if (!('operation_id' in res)) return;
    await s.server.queue.idle(60_000);
    const op = await s.server.queue.get(DEFAULT_TENANT, res.operation_id);
    if (op?.status !== 'completed') throw new Error(`op ${op?.status}: ${op?.error}`);
  };
  return {
    stat: (rel) => fa.stat(p(rel)),
    async *list(dir) {
      let cursor: string | undefined;
      do {
        const { body } = await fa.list({ path: p(dir), sort: 'name', dir: 'asc', limit: 5000, offset: 0, cursor });
        const page = JSON.parse((Array.isArray(body) ? Buffer.concat(body) : body).toString()) as Listing;
        for (const e of page.entries) yield entryOf(e);
        cursor = page.next_cursor ?? undefined;
      } while (cursor);
    },
    read: (rel, range, signal) => fa.read(p(rel), range, signal),
    async write(rel, body: Readable, o = {}) {
      const node = await fa.write(p(rel), body, { size: o.size, mime: o.mime, overwrite: o.overwrite, signal: o.signal, origin: 'upload' });
      return { name: node.name, type: node.type, size: node.size, mtime: node.mtime, etag: node.etag ?? undefined, mime: node.mime ?? undefined };
    },
    mkdir: async (rel) => void (await fa.mkdir(p(rel))),
    delete: async (rel) => void (await fa.deleteOne(p(rel))),
    close: async () => undefined,
    move: async (from, to, o) => settle(await fa.move(p(from), p(to), o.overwrite)),
    copy: async (from, to, o) => settle(await fa.copy(p(from), p(to), o.overwrite)),
  };
}

function entryOf(e: FileEntry): Entry {
  return { name: e.name, type: e.type, size: e.size, mtime: Date.parse(e.modified), etag: e.etag, mime: e.mime };
}
