/**
 * The five provider failures the spec names, and the one place that sorts a
 * provider's HTTP error (status, message, code) into them. Every adapter
 * feeds its SDK's or server's error shape through `classify`, so the three
 * agree on what a 401, a model without tools or an over-long prompt become.
 */
import { AppError, type ErrorCode } from '../../errors';

export type ProviderErrorCode = 'assistant_provider' | 'assistant_provider_key' | 'assistant_no_tools' | 'assistant_timeout' | 'assistant_too_long';

/**
 * An AppError with a provider code. `detail` (the provider's own words) goes to
 * logs only: a 401 body can quote part of the key, so the caller sees the code.
 */
export function providerError(code: ProviderErrorCode, provider: string, detail: string, status?: number): AppError {
  // The spec's Errors table lists these codes; the assistant branch adds them to ErrorCode.
  const c = code as unknown as ErrorCode;
  return new AppError(c, { provider }, { provider, ...(status === undefined ? {} : { status }) }, `${provider}: ${detail}`);
}

// Real bodies: Ollama "<model> does not support tools" (native and /v1), OpenAI "tools is not supported
// in this model", Azure "Unrecognized request argument supplied: tools", vLLM/Qwen "Unsupported param: tools",
// vLLM "auto" tool choice requires --enable-auto-tool-choice.
const NO_TOOLS =
  /does not support tools|doesn't support tools|tools? (is|are) not supported|not support(ed)? tool|unrecognized request argument supplied: tools|unsupported param(eter)?:? '?tools|tool choice requires/i;
// Anthropic "prompt is too long: N tokens > M maximum", OpenAI "maximum context length is N tokens"
// (code context_length_exceeded), Ollama "the input length exceeds the context length".
const TOO_LONG = /prompt is too long|maximum context length|context_length_exceeded|exceeds the context|context window|too many tokens|request_too_large/i;

/** Sorts one HTTP-level provider failure. `status` is undefined for an error sent inside the stream. */
export function classify(provider: string, status: number | undefined, message: string, code?: string | null): AppError {
  const text = `${code ?? ''} ${message}`;
  if (status === 401 || status === 403) return providerError('assistant_provider_key', provider, message, status);
  if (NO_TOOLS.test(text)) return providerError('assistant_no_tools', provider, message, status);
  if (status === 413 || TOO_LONG.test(text)) return providerError('assistant_too_long', provider, message, status);
  return providerError('assistant_provider', provider, message, status);
}

export const malformed = (provider: string, what: string) => providerError('assistant_provider', provider, `malformed stream: ${what}`);
