/**
 * What the two SDK-based providers (Anthropic, OpenAI-compatible) share: how
 * their clients are configured and how a client becomes a ChatProvider whose
 * every call is bounded by the timeout and the caller's cancel.
 */
import type { AppError } from '../../errors';
import { boundCall, boundStream, timeoutOf, type Bound } from './deadline';
import type { StreamRequest } from './shared';
import type { ChatProvider, ProviderEvent, ProviderSettings } from './types';

/**
 * Client options: no SDK retries (a retry would double the wait the person
 * sees; the engine decides), no SDK logging (it would log raw stream chunks,
 * i.e. file text), our timeout. An undefined base is the SDK's own default.
 * A compatible server may want no key, but the SDKs refuse an empty one.
 */
export const sdkClientOptions = (s: ProviderSettings, baseURL: string | undefined) => ({
  apiKey: s.api_key || 'none',
  baseURL,
  maxRetries: 0,
  logLevel: 'off' as const,
  timeout: timeoutOf(s.timeout_ms),
});

export interface SdkCalls {
  provider: string;
  mapError: (e: unknown) => AppError;
  models: (signal: AbortSignal) => AsyncIterable<{ id: string }>;
  turn: (req: StreamRequest, signal: AbortSignal) => AsyncGenerator<ProviderEvent>;
}

export function sdkProvider(s: ProviderSettings, c: SdkCalls): ChatProvider {
  const bound = (signal?: AbortSignal): Bound => ({ provider: c.provider, timeoutMs: s.timeout_ms, signal, mapError: c.mapError });
  return {
    listModels: (signal) =>
      boundCall(bound(signal), async (sig) => {
        const ids: string[] = [];
        for await (const m of c.models(sig)) ids.push(m.id);
        return ids;
      }),
    stream: (req) => boundStream(bound(req.signal), (sig) => c.turn(req, sig)),
  };
}
