/** The assistant's model providers: one factory, three adapters behind ChatProvider. */
import { anthropicProvider } from './anthropic';
import { ollamaProvider } from './ollama';
import { openaiProvider } from './openai';
import type { ProviderFactory } from './types';

export * from './types';
export { providerError, type ProviderErrorCode } from './errors';
export { DEFAULT_PROVIDER_TIMEOUT_MS } from './deadline';

export const createProvider: ProviderFactory = (s) => {
  switch (s.provider) {
    case 'anthropic':
      return anthropicProvider(s);
    case 'openai':
      return openaiProvider(s);
    case 'ollama':
      return ollamaProvider(s);
  }
};
