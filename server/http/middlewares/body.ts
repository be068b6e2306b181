/**
 * Body readers. JSON: refuses non-JSON writes (`bad_body`), unreadable JSON
 * (`bad_json`) and bodies over the limit (413 `payload_too_large`) while
 * streaming, so a huge body is never buffered whole.
 */
import { AppError } from '../../errors';
import type { Ctx } from '../context';

export async function readJson(ctx: Ctx, limit: number): Promise<unknown> {
  const len = Number(ctx.get('content-length') || 0);
  if (len === 0 && !ctx.get('transfer-encoding')) return {};
  if (!ctx.is('application/json', 'application/*+json')) throw new AppError('bad_body');
  const text = (await readBytes(ctx, limit)).toString('utf8');
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new AppError('bad_json');
  }
}

/** The whole body as bytes, refused (413 `payload_too_large`) as soon as it passes `limit`. */
export async function readBytes(ctx: Ctx, limit: number): Promise<Buffer> {
  if (Number(ctx.get('content-length') || 0) > limit) throw new AppError('payload_too_large', { max: limit });
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      ctx.req.unpipe();
      ctx.req.resume();
      throw new AppError('payload_too_large', { max: limit });
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** Reads the JSON body and requires a JSON object (not an array or a scalar). */
export async function readObject(ctx: Ctx, limit: number): Promise<Record<string, unknown>> {
  const v = await readJson(ctx, limit);
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new AppError('bad_body', {}, { reason: 'expected a JSON object' });
  return v as Record<string, unknown>;
}
