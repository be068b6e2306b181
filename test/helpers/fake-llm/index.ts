/** Fake LLM servers for tests: one per provider wire protocol, all playing the same script format. */
export { startFake, type FakeLlm, type Turn, type Reply, type ScriptedToolCall, type Recorded } from './script';
export { startFakeAnthropic } from './anthropic';
export { startFakeOpenAI } from './openai';
export { startFakeOllama } from './ollama';
