/**
 * `GET /api/files/pdf?path=` (signed in): an office document's PDF rendition
 * (docs/docserver.md "Read-only previews"), the preview shown when no
 * document server is configured. The file is opened through the caller's
 * file service (viewer access); the cached PDF is served by the one
 * byte-serving path (validators derived from the source's etag, byte ranges
 * for the browser's PDF viewer). 415 for a file that is not an office
 * document, 503 `not_configured` without LibreOffice.
 * `GET /api/files/pdf/<name>.pdf?path=` is the same answer under a URL whose
 * last segment is the file's own name: Chromium's PDF viewer titles and saves
 * a document by that segment (a blob URL gave it a UUID). The segment is
 * cosmetic; `path` alone says which file.
 */
import Router from '@koa/router';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { FileService, OpenFile } from '../../files';
import type { PdfRenditions } from '../../thumbs';
import { serveFile } from '../serve-file';
import { requireUser } from '../middlewares/auth';
import { actor, type AppState } from '../context';
import { filesDoor } from './files.routes';
import { q, validate, z } from '../validate';
import { routeDoc } from '../openapi/route-doc';

const doc = routeDoc('Files', 'user');

const pdfQuery = z.object({ path: q.str() });

export function filesPdfRoutes(d: { files: FileService; pdfs: PdfRenditions }): Router<AppState> {
  const r = new Router<AppState>({ prefix: '/api/files/pdf' });
  r.use(filesDoor, requireUser);

  r.get(
    ['/', '/:name'],
    doc({
      summary: 'An office document’s PDF rendition (ranges honoured); `/{name}` is the same under the file’s own name',
      query: pdfQuery,
      produces: ['application/pdf'],
    }),
    async (ctx) => {
      const { path } = validate(pdfQuery, ctx.query);
      const source = await d.files.forActor(actor(ctx), 'refuse').open(path); // no rendition of ciphertext (docs/vault.md)
      const pdf = await d.pdfs.pdf(source);
      const st = await stat(pdf);
      const rendition: OpenFile = {
        place: source.place,
        name: source.name.replace(/\.[^.]*$/, '') + '.pdf',
        size: st.size,
        mtime: source.mtime,
        // The rendition changes exactly when the source's bytes do.
        etag: `"pdf-${source.etag.replace(/^W\/|"/g, '')}"`,
        mime: 'application/pdf',
        read: async (span) => createReadStream(pdf, span ? { start: span.start, end: span.end } : {}),
        localFile: async () => pdf,
        presign: async () => null,
      };
      await serveFile(ctx, rendition, { inline: true, cacheControl: 'private, no-cache', conditional: true, ranges: 'single' });
    },
  );
  return r;
}
