/**
 * Archives: the streaming ZIP writer (also used by share folder ZIPs), safe
 * listing and extraction of ZIP files, and ZIP creation from selected paths.
 */
export { ZipWriter, type ZipFileOptions, type ZipWriterOptions } from './zip-writer';
