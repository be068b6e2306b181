/**
 * The pieces every multipart/form-data route shares: the parser, the error
 * a refused form answers, and how a refused form stops being read.
 */
import { busyError, isBusy } from '../db';
import busboy from 'busboy';
import type { Readable } from 'node:stream';
import { AppError, isAppError } from '../errors';
import type { Ctx } from './context';

/** A busboy parser for the request's form; `bad_multipart` when it is not multipart/form-data or its header is unreadable. */
export function formParser(ctx: Ctx, limits: busboy.Limits): busboy.Busboy {
  if (!ctx.is('multipart/form-data')) throw new AppError('bad_multipart', { reason: 'expected multipart/form-data' });
  try {
    return busboy({ headers: ctx.req.headers, limits });
  } catch {
    throw new AppError('bad_multipart', { reason: 'unreadable multipart header' });
  }
}

/** `e` as the error a form answers: an AppError as it is, anything else (a parser failure) `bad_multipart`. */
export function formError(e: unknown): AppError {
  if (isAppError(e)) return e;
  // A database held elsewhere is no fault of the form: it answers 503 like everywhere else.
  if (isBusy(e)) return busyError();
  return new AppError('bad_multipart', { reason: e instanceof Error ? e.message : 'unreadable form' });
}

/** Stops reading a refused form: the rest of the body is drained and the connection closed, so its tail never parses as a next request. */
export function dropForm(ctx: Ctx, bb: busboy.Busboy): void {
  ctx.req.unpipe(bb);
  ctx.req.resume();
  ctx.set('Connection', 'close');
}

/**
 * Lets go of a file part nobody will read: drains it and hears the error busboy still raises on it when the
 * body ends mid-part (a refused form's request is unpiped but its end still reaches the parser), which would
 * otherwise be an unhandled 'error' event and end the process.
 */
export function skipPart(part: Readable): void {
  part.on('error', () => undefined);
  part.resume();
}
