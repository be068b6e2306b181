/** Small pieces the three adapters share. */
import { randomBytes } from 'node:crypto';
import { malformed } from './errors';
import type { ChatProvider } from './types';

export type StreamRequest = Parameters<ChatProvider['stream']>[0];

/** For servers that send a tool call without an id (the engine pairs results by id). */
export const newCallId = (): string => `call_${randomBytes(12).toString('hex')}`;

export const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A tool call's assembled arguments: '' is `{}`; anything but a JSON object is a malformed stream. */
export function parseToolInput(provider: string, name: string, json: string): Record<string, unknown> {
  if (json.trim() === '') return {};
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch {
    throw malformed(provider, `arguments of tool call ${name} are not JSON`);
  }
  if (!isObject(v)) throw malformed(provider, `arguments of tool call ${name} are not an object`);
  return v;
}
