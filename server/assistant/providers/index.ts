/**
 * The assistant's model providers: one factory, three adapters behind ChatProvider. The two SDK-based
 * adapters (Anthropic, OpenAI-compatible) load on their first call, so most installs never load an AI SDK.
 */
import { lazy } from '../../lib/lazy';
import { ollamaProvider } from './ollama';
import type { ChatProvider, ProviderFactory } from './types';

export * from './types';
export { providerError, type ProviderErrorCode } from './errors';
export { DEFAULT_PROVIDER_TIMEOUT_MS } from './deadline';

const anthropic = lazy(() => import('./anthropic'));
const openai = lazy(() => import('./openai'));

/** A ChatProvider whose adapter is built on its first call (a failed load is tried again on the next one). */
function onFirstCall(build: () => Promise<ChatProvider>): ChatProvider {
  const adapter = lazy(build);
  return {
    listModels: async (signal) => (await adapter()).listModels(signal),
    async *stream(req) {
      yield* (await adapter()).stream(req);
    },
  };
}

export const createProvider: ProviderFactory = (s) => {
  switch (s.provider) {
    case 'anthropic':
      return onFirstCall(async () => (await anthropic()).anthropicProvider(s));
    case 'openai':
      return onFirstCall(async () => (await openai()).openaiProvider(s));
    case 'ollama':
      return ollamaProvider(s);
  }
};
