/**
 * Uploads: POST /api/files/upload (multipart/form-data, field `path` then
 * one or more `file`s) and the resumable chunked flow under
 * /api/files/upload/{init,chunk,status,finalize,abort}.
 */
import Router from '@koa/router';
import type { Readable } from 'node:stream';
import { AppError } from '../../errors';
import { pipeFrom } from '../../lib/streams';
import { dropForm, formError, formParser, skipPart } from '../multipart';
import { drainRefused } from '../refused-body';
import type { Published, UploadsService } from '../../uploads';
import { requireUser } from '../middlewares/auth';
import { readObject } from '../middlewares/body';
import { actor, setPartEtag, type AppState, type Ctx } from '../context';
import { q, validate, z } from '../validate';
import { filesDoor } from './files.routes';
import { routeDoc } from '../openapi/route-doc';

const doc = routeDoc('Uploads', 'user');

const uploadId = z.string().min(1).max(100);
const schemas = {
  init: z.strictObject({
    path: z.string().min(1).max(8192),
    size: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
    mime: z.string().max(255).default(''),
    chunk_size: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).optional(),
  }),
  chunk: z.object({ upload_id: uploadId, part: q.int(1, 100_000) }),
  status: z.object({ upload_id: uploadId }),
  finalize: z.strictObject({
    upload_id: uploadId,
    etags: z.array(z.strictObject({ part: z.number().int().min(1), etag: z.string().min(1).max(512) })).max(100_000),
  }),
  abort: z.strictObject({ upload_id: uploadId }),
  sha: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/)
    .optional(),
};

/** Files one form may carry. */
const MAX_FORM_FILES = 1000;

/** `refusedBodyBytes`: how much of a refused body is read away so its envelope reaches the client on a kept connection (http/refused-body.ts). */
export function uploadRoutes(d: { uploads: UploadsService; maxJsonBytes: number; refusedBodyBytes: number }): Router<AppState> {
  const r = new Router<AppState>({ prefix: '/api/files/upload' });
  r.use(filesDoor, requireUser);
  const json = <T extends z.ZodType>(ctx: Ctx, schema: T) => readObject(ctx, d.maxJsonBytes).then((b) => validate(schema, b));

  r.post('/', doc({ summary: 'Upload files in one multipart form (field `path` first, then `file`s)', consumes: 'multipart/form-data' }), async (ctx) => {
    const c = actor(ctx);
    let files: Published[];
    try {
      files = await readForm(ctx, (folder, name, stream) => d.uploads.single(c, folder, name, stream));
    } catch (e) {
      await drainRefused(ctx, d.refusedBodyBytes);
      throw e;
    }
    if (files.length === 0) throw new AppError('bad_multipart', { reason: 'no file in the form' });
    ctx.body = { ...files[0], files };
  });

  r.post('/init', doc({ summary: 'Start a resumable upload (presigned part URLs where the storage offers them)', body: schemas.init }), async (ctx) => {
    ctx.body = await d.uploads.init(actor(ctx), await json(ctx, schemas.init));
  });

  r.post(
    '/chunk',
    doc({
      summary: 'Send one part of a resumable upload (the body is the bytes; optional X-Chunk-SHA256)',
      query: schemas.chunk,
      consumes: 'application/octet-stream',
    }),
    async (ctx) => {
      try {
        const qy = validate(schemas.chunk, ctx.query);
        const sha = validate(z.object({ sha: schemas.sha }), { sha: ctx.get('x-chunk-sha256') || undefined }).sha;
        // A stated length is checked before reading: a body too long is then refused before it streams (and read away).
        const declared = ctx.get('content-length') && !ctx.get('transfer-encoding') ? Number(ctx.get('content-length')) : undefined;
        const stored = await d.uploads.chunk(actor(ctx), qy.upload_id, qy.part, ctx.req, sha, declared);
        setPartEtag(ctx, stored.etag);
        ctx.body = stored;
      } catch (e) {
        // A refused body may be half read: its rest is read away (or the connection closed), or its tail would parse as the next request.
        await drainRefused(ctx, d.refusedBodyBytes);
        throw e;
      }
    },
  );

  r.get('/status', doc({ summary: 'The parts a resumable upload already holds', query: schemas.status }), async (ctx) => {
    ctx.body = await d.uploads.status(actor(ctx), validate(schemas.status, ctx.query).upload_id);
  });

  r.post('/finalize', doc({ summary: 'Complete a resumable upload', body: schemas.finalize }), async (ctx) => {
    const b = await json(ctx, schemas.finalize);
    ctx.body = await d.uploads.finalize(actor(ctx), b.upload_id, b.etags);
  });

  r.post('/abort', doc({ summary: 'Abort a resumable upload and discard its parts', body: schemas.abort }), async (ctx) => {
    const b = await json(ctx, schemas.abort);
    await d.uploads.abort(actor(ctx), b.upload_id);
    ctx.body = { ok: true };
  });
  return r;
}

/**
 * Streams a multipart/form-data body: the `path` field names the target
 * folder and must come before the files; each file is handed on as a stream
 * as it arrives (nothing is buffered whole), in form order.
 */
function readForm(ctx: Ctx, onFile: (folder: string, name: string, stream: Readable) => Promise<Published>): Promise<Published[]> {
  const bb = formParser(ctx, { files: MAX_FORM_FILES, fields: 20, fieldSize: 16 * 1024 });
  return new Promise((resolve, reject) => {
    let folder: string | undefined;
    let failed = false;
    let chain: Promise<unknown> = Promise.resolve();
    const out: Published[] = [];
    let n = 0;
    const fail = (e: unknown) => {
      if (failed) return;
      failed = true;
      dropForm(ctx, bb);
      reject(formError(e));
    };
    bb.on('field', (name, value) => {
      if (name === 'path') folder = value;
    });
    bb.on('file', (_name, stream, info) => {
      if (failed) return skipPart(stream);
      if (folder === undefined) {
        skipPart(stream);
        return fail(new AppError('bad_multipart', { reason: 'the path field must come before the file' }));
      }
      const at = n++;
      const p = onFile(folder, info.filename ?? '', stream).then(
        (pub) => void (out[at] = pub),
        (e) => {
          skipPart(stream);
          fail(e);
        },
      );
      chain = chain.then(() => p);
    });
    bb.on('close', () => void chain.then(() => !failed && resolve(out)));
    bb.on('error', fail);
    ctx.req.on('aborted', () => fail(new AppError('bad_body', { reason: 'the body was cut off' })));
    pipeFrom(ctx.req, bb);
  });
}
