/**
 * Archives: safe listing and extraction of ZIP files, listing of tar and
 * tar.gz files, and ZIP creation from selected paths (the streaming ZIP
 * writer itself is in lib/, shared with share folder ZIPs).
 */
export { ArchivesService, EXTRACT_JOB, ADD_JOB, MAX_RATIO, MAX_PATHS, journalStore } from './archives.service';
export { openZip, entryProblem, MAX_ENTRIES, type ZipEntry } from './zip-reader';
export { DownloadZip, type ZipPlan } from './download-zip';
export { shouldCompress } from './compressible';
export { listTar, isTarName, type TarEntry } from './tar-reader';

import type { ActorRestorer } from '../auth';
import type { Catalogue } from '../catalogue';
import type { FileService } from '../files';
import type { JobQueue } from '../jobs';
import { ArchivesService } from './archives.service';
import type { CommitPolicy } from '../lib/zip-build';

/**
 * Builds the archive service (it registers its op kinds on the queue) and
 * deletes ZIP build temp files in `buildDir` that no op will resume.
 */
export async function createArchives(o: {
  files: FileService;
  catalogue: Catalogue;
  queue: JobQueue;
  actors: ActorRestorer;
  maxArchiveBytes: number;
  buildDir: string;
  zipPolicy?: CommitPolicy | null;
}): Promise<ArchivesService> {
  const svc = new ArchivesService(o.files, o.catalogue, o.queue, o.actors, o.maxArchiveBytes, o.buildDir, o.zipPolicy);
  await svc.sweepBuilds();
  return svc;
}
