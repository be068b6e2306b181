/**
 * The assistant's admin settings, kept under the `assistant` settings key.
 * The API key is sealed with the installation's secret key (AES-256-GCM, like
 * storage secrets) and never read back; without a secret key none can be
 * stored (`assistant_no_secret_key`). Limits default to the spec's Limits row.
 */
import { z } from 'zod';
import type { SettingsStore } from '../settings';
import { decrypt, encrypt } from '../lib/crypto';
import { AppError } from '../errors';
import type { ProviderSettings } from './providers/types';
import type { AssistantSettingsView } from '../contract';

export const PROVIDERS = ['anthropic', 'openai', 'ollama'] as const;

export const DEFAULT_LIMITS = {
  max_steps: 10,
  max_tokens: 8192,
  token_budget: 400_000,
  timeout_ms: 120_000,
  per_minute: 20,
  retention_days: 30,
  /** Characters in one chat message (413 `assistant_message_long` above). */
  message_max: 32_000,
};
export type Limits = typeof DEFAULT_LIMITS;

export const limitsSchema = z.strictObject({
  max_steps: z.number().int().min(1).max(50),
  max_tokens: z.number().int().min(256).max(65_536),
  token_budget: z.number().int().min(1000).max(10_000_000),
  timeout_ms: z.number().int().min(1000).max(600_000),
  per_minute: z.number().int().min(1).max(1000),
  retention_days: z.number().int().min(1).max(3650),
  message_max: z.number().int().min(100).max(1_000_000),
});

export const patchSchema = z
  .strictObject({
    enabled: z.boolean(),
    provider: z.enum(PROVIDERS),
    address: z.union([z.literal(''), z.url({ protocol: /^https?$/ }).max(2048)]),
    /** '' clears the stored key. */
    api_key: z.string().max(4096),
    model: z.string().max(256),
    hide_button: z.boolean(),
    limits: limitsSchema.partial(),
  })
  .partial();

interface Stored {
  enabled: boolean;
  provider: (typeof PROVIDERS)[number];
  address: string;
  api_key_sealed: string;
  model: string;
  hide_button: boolean;
  limits: Limits;
}

const DEFAULTS: Stored = { enabled: false, provider: 'openai', address: '', api_key_sealed: '', model: '', hide_button: false, limits: DEFAULT_LIMITS };

export type { AssistantSettingsView };

export class AssistantSettings {
  constructor(
    private store: SettingsStore,
    private secretKey: Buffer | null,
  ) {}

  read(stored: Record<string, unknown> = this.store.get('assistant')): Stored {
    const v = stored as Partial<Stored>;
    return { ...DEFAULTS, ...v, limits: { ...DEFAULT_LIMITS, ...(v.limits ?? {}) } };
  }

  /** A model is named, and a key is stored where the provider needs one (ollama runs without). */
  configured(s = this.read()): boolean {
    return !!s.model && (s.provider === 'ollama' || !!s.api_key_sealed || !!s.address);
  }

  view(): AssistantSettingsView {
    const { api_key_sealed, ...rest } = this.read();
    return { ...rest, api_key_set: !!api_key_sealed, configured: this.configured() };
  }

  async patch(p: z.infer<typeof patchSchema>): Promise<AssistantSettingsView> {
    const { api_key, limits, ...rest } = p;
    if (api_key !== undefined && api_key !== '' && !this.secretKey?.length) throw new AppError('assistant_no_secret_key');
    await this.store.update('assistant', (stored) => {
      const cur = this.read(stored);
      const next: Stored = { ...cur, ...rest, limits: { ...cur.limits, ...(limits ?? {}) } };
      if (api_key !== undefined) next.api_key_sealed = api_key === '' ? '' : encrypt(this.secretKey!, api_key);
      return next as unknown as Record<string, unknown>;
    });
    return this.view();
  }

  /** What a provider adapter needs, with the key unsealed. */
  provider(s = this.read()): ProviderSettings {
    const api_key = s.api_key_sealed && this.secretKey?.length ? decrypt(this.secretKey, s.api_key_sealed) : '';
    return { provider: s.provider, address: s.address, api_key, model: s.model, timeout_ms: s.limits.timeout_ms };
  }

  /** `off`, `not_configured` or `ready` (capabilities and `GET /api/files/assistant`). */
  state(s = this.read()): 'off' | 'not_configured' | 'ready' {
    if (!s.enabled) return 'off';
    return this.configured(s) ? 'ready' : 'not_configured';
  }
}
