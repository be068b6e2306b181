/**
 * The document server and diagram editor integration (docs/docserver.md):
 * the external services' settings (`external_services`), new documents
 * built inside the service (the file service's new-document port), the
 * signed editor descriptor and fetch URL, the save callback, and the admin's
 * Test button. Every write goes through the file service and its gate.
 */
import type { Catalogue } from '../catalogue';
import type { Db } from '../db';
import type { FileService } from '../files';
import { CallbackService } from './callback.service';
import { EditorService } from './editor.service';
import { ExternalServices, type ExternalEnv } from './external.service';
import { NewDocuments } from './templates';
import { ExternalTester } from './tester';

export { ExternalServices, EXTERNAL_NAMES, MASK, isExternalName, type ExternalName, type DocserverSettings, type ExternalEnv } from './external.service';
export { NewDocuments, ALL_NEWDOC_TYPES, buildTemplate } from './templates';
export { EditorService, DOC_GROUPS, documentType, type DocumentType } from './editor.service';
export { CallbackService, type SaveOutcome } from './callback.service';
export { ExternalTester } from './tester';
export { docKey, keyParts, signFetch, checkFetch, FETCH_TTL_MS } from './signing';

/**
 * First half, before the file service: the settings (the environment applied
 * at once) and the new-document port, which reads them at each call.
 */
export async function createExternal(d: { db: Db; secretKey: Buffer; env: ExternalEnv }) {
  const external = new ExternalServices(d.db, d.secretKey);
  await external.load();
  await external.applyEnvironment(d.env);
  const newdocs = new NewDocuments({ docserver: () => external.docserver() !== null, diagram: () => external.diagramUrl() !== '' });
  return { external, newdocs };
}

export interface DocserverDeps {
  db: Db;
  files: FileService;
  catalogue: Catalogue;
  external: ExternalServices;
  secretKey: Buffer;
  publicUrl: string;
  stagingDir: string;
  maxUploadBytes: number;
  log: { info(msg: string): void; warn(msg: string): void };
}

/** Second half, on the file service: the editor's routes' services. */
export function createDocserver(d: DocserverDeps) {
  const editor = new EditorService(d);
  const callbacks = new CallbackService(d);
  const tester = new ExternalTester(d.external, editor);
  return { external: d.external, editor, callbacks, tester };
}

export type Docserver = ReturnType<typeof createDocserver>;
