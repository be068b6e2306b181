/**
 * File requests without JavaScript: the drop page's own `<form method="post"
 * enctype="multipart/form-data">` posted to `/d/{token}` (old browsers,
 * strict privacy modes, curl). The fields (pin, name, note) come first, as
 * browsers send them in form order; each file, up to the drop chunk size
 * (larger ones need the page's script and its resumable chunked protocol), is
 * read whole and then goes through exactly the calls the script makes (a
 * submission, addFile, one part, finalize, finish), so every rule of the link
 * applies unchanged: PIN, name and extension checks, sizes, files per
 * submission, uploads per link, rate limits, the note, the submission folder,
 * read-only storages and the `drop.received` event.
 */
import { Readable } from 'node:stream';
import { AppError } from '../../errors';
import { pipeFrom } from '../../lib/streams';
import { DROP_CHUNK, type Shares } from '../../shares';
import type { TenantScope } from '../../db';
import { reqMeta, type Ctx } from '../context';
import { dropForm, formError, formParser, skipPart } from '../multipart';

type Drops = Shares['drops'];

/** What a form post achieved: the files received, and the error that stopped it (if any). */
export interface DropFormResult {
  received: string[];
  error: AppError | null;
}

const MAX_FORM_FILES = 1000;

/**
 * Reads the posted form and sends its files. Never throws for a refusal met
 * after the submission began (it is in `error`, with the files received
 * before it, and the submission is finished so they are announced); throws
 * only what refuses the post as a whole (bad form, dead link, wrong PIN).
 */
export function receiveDropForm(ctx: Ctx, drops: Drops, scope: TenantScope, token: string): Promise<DropFormResult> {
  const bb = formParser(ctx, { files: MAX_FORM_FILES, fields: 10, fieldSize: 20_000 });
  const req = reqMeta(ctx);
  const fields: { pin?: string; name?: string; note?: string } = {};
  const received: string[] = [];
  let sid: string | null = null;
  const begin = async () => {
    sid ??= (await drops.start(scope, token, { pin: fields.pin }, { name: fields.name, note: fields.note }, req)).submission_id;
    return sid;
  };
  const send = async (name: string, body: Buffer) => {
    const s = await begin();
    const file = await drops.addFile(scope, token, s, { name, size: body.length }, req);
    const part = await drops.chunk(scope, token, s, file.upload_id, 1, Readable.from([body]), req);
    await drops.finalize(scope, token, s, file.upload_id, [{ part: 1, etag: part.etag }], req);
    received.push(file.name);
  };

  return new Promise((resolve, reject) => {
    let failed: unknown = null;
    let chain: Promise<unknown> = Promise.resolve();
    const stop = (e: unknown) => {
      if (failed) return;
      failed = e;
      dropForm(ctx, bb);
    };
    let settled = false;
    const settle = async () => {
      if (settled) return;
      settled = true;
      const error = failed === null ? null : formError(failed);
      // Before any file landed, a refusal is the whole post's (dead link, wrong PIN, read-only storage…).
      if (error && sid === null) return reject(error);
      // Announce what arrived, even after a refusal.
      if (sid !== null) await drops.finish(scope, token, sid, req).catch(() => undefined);
      resolve({ received, error });
    };
    bb.on('field', (name, value) => {
      if (name === 'pin' || name === 'name' || name === 'note') fields[name] = value;
    });
    bb.on('file', (_field, stream, info) => {
      // Read in turn: a file waits (busboy holds the body back) until the one before it is sent.
      chain = chain.then(async () => {
        if (failed) return skipPart(stream);
        try {
          const body = await readUpTo(stream, DROP_CHUNK);
          // An empty file input still sends one part, without a name.
          if (!info.filename && body.length === 0) return;
          await send(info.filename ?? '', body);
        } catch (e) {
          skipPart(stream);
          stop(e);
          // The part may be left half read, so busboy may never close: answer now.
          await settle();
        }
      });
    });
    bb.on('close', () => {
      chain = chain.then(async () => {
        // A note alone is a submission too.
        if (!failed && sid === null) {
          if (!fields.note?.trim()) stop(new AppError('bad_multipart', { reason: 'no file in the form' }));
          else await begin().catch(stop);
        }
        await settle();
      });
    });
    bb.on('error', (e) => {
      stop(e);
      chain = chain.then(settle);
    });
    ctx.req.on('aborted', () => stop(new AppError('bad_body', { reason: 'the body was cut off' })));
    pipeFrom(ctx.req, bb);
  });
}

/** The whole stream, refused with `payload_too_large` past `max` bytes (the rest is left unread). */
async function readUpTo(stream: Readable, max: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  let n = 0;
  for await (const c of stream as AsyncIterable<Buffer>) {
    n += c.length;
    if (n > max) throw new AppError('payload_too_large', { max }, { max, reason: 'larger than one chunk: the page sends such files with JavaScript' });
    parts.push(c);
  }
  return Buffer.concat(parts);
}
