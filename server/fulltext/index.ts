/**
 * Full text of documents for search: which files have text (PDF, office
 * documents old and new, e-mail, HTML, Markdown, CSV, plain text), its extraction in bounded
 * background work, and the hooks that queue it after writes and syncs. The
 * text lands in the catalogue's search index (catalogue/text-extracts.repo.ts);
 * search itself is the file service's (files/search.service.ts).
 */
export { TextIndexer, TEXT_JOB, type TextDrainResult } from './indexer';
export { extractText, textFormatOf, wantsText, TEXT_CAP, EXTRACT_TIMEOUT_MS, type FileSource, type TextFormat } from './extract';
export { ExtractError } from './errors';
