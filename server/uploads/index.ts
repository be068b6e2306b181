/**
 * Uploads: single-request and resumable chunked uploads. `createUploads`
 * wires the session store, the staging folder and the service.
 */
import type { Auth } from '../auth';
import type { Catalogue } from '../catalogue';
import { TenantsRepo, type Db } from '../db';
import type { FileService } from '../files';
import { SessionsRepo } from './sessions.repo';
import { StagedFiles } from './staged-file';
import { UploadsService, type FinalizeLease, type UploadLimits } from './uploads.service';

export { UploadsService, DEFAULT_CHUNK, type UploadLimits, type FinalizeLease, type Published, type SessionView, type UploadOrigin } from './uploads.service';

export function createUploads(d: {
  db: Db;
  files: FileService;
  catalogue: Catalogue;
  auth: Auth;
  stagingDir: string;
  limits: UploadLimits;
  lease: FinalizeLease;
}): UploadsService {
  return new UploadsService(d.files, d.catalogue, d.auth, new SessionsRepo(d.db), new TenantsRepo(d.db), new StagedFiles(d.stagingDir), d.limits, d.lease);
}
