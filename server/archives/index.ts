/**
 * Archives: the streaming ZIP writer (also used by share folder ZIPs), safe
 * listing and extraction of ZIP files, listing of tar and tar.gz files, and
 * ZIP creation from selected paths.
 */
export { ZipWriter, type ZipFileOptions, type ZipWriterOptions } from './zip-writer';
export { ArchivesService, EXTRACT_JOB, ADD_JOB, MAX_RATIO, MAX_PATHS } from './archives.service';
export { openZip, entryProblem, MAX_ENTRIES, type ZipEntry } from './zip-reader';
export { DownloadZip, catalogueZipSource, type ZipPlan, type ZipSource } from './download-zip';
export { shouldCompress } from './compressible';
export { listTar, isTarName, type TarEntry } from './tar-reader';

import type { Db } from '../db';
import type { JobQueue } from '../jobs';
import type { Catalogue } from '../catalogue';
import { ArchivesService } from './archives.service';

/** Builds the archive service and registers its op kinds on the queue. */
export function createArchives(o: { db: Db; catalogue: Catalogue; queue: JobQueue; maxArchiveBytes: number }): ArchivesService {
  const s = new ArchivesService(o.db, o.catalogue, o.queue, o.maxArchiveBytes);
  s.register();
  return s;
}
