/** Fake LLM servers for tests: one per provider wire protocol, all playing the same script format. */
import { startFakeAnthropic } from './anthropic';
import { startFakeOllama } from './ollama';
import { startFakeOpenAI } from './openai';
import type { Turn } from './script';

export { startFake, type FakeLlm, type Turn, type Reply, type ScriptedToolCall, type Recorded, type ErrorKind } from './script';
export { startFakeAnthropic, startFakeOpenAI, startFakeOllama };

/** The fake for a provider setting's name (`fake.url` is then that setting's address). */
export const startFakeLlm = (provider: 'anthropic' | 'openai' | 'ollama', opts?: { models?: string[]; turns?: Turn[] }) =>
  ({ anthropic: startFakeAnthropic, openai: startFakeOpenAI, ollama: startFakeOllama })[provider](opts);
