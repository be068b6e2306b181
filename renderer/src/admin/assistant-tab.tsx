/**
 * Admin → Assistant: the provider, its address, the API key (write-only: an
 * empty field keeps the stored key, "Forget" clears it), the model, on/off,
 * the hidden button and the limits; Test asks the saved provider for its
 * models and a one-word reply. A server without a secret key cannot store an
 * API key (`assistant_no_secret_key`): the form says why and what to do.
 */
import { useEffect, useState } from 'react';
import { ApiError } from '../api/client';
import { useI18n, type MessageKey } from '../i18n';
import { useToast } from '../ui/toast';
import { useSubmit } from '../ui/use-submit';
import * as admin from './admin-api';
import { Section, useSection } from './section';

const PROVIDERS = ['openai', 'anthropic', 'ollama'] as const;
type Limit = keyof admin.AssistantSettings['limits'];
const LIMITS: Array<[Limit, MessageKey]> = [
  ['max_steps', 'aiadmin.max_steps'],
  ['max_tokens', 'aiadmin.max_tokens'],
  ['token_budget', 'aiadmin.token_budget'],
  ['timeout_ms', 'aiadmin.timeout_ms'],
  ['per_minute', 'aiadmin.per_minute'],
  ['retention_days', 'aiadmin.retention_days'],
  ['message_max', 'aiadmin.message_max'],
];

type Form = Omit<admin.AssistantSettings, 'api_key_set' | 'configured'> & { api_key: string };

export function AssistantTab() {
  const { t } = useI18n();
  const toast = useToast();
  const [v, error, missing, setV] = useSection(admin.assistant);
  const [f, setF] = useState<Form | null>(null);
  const [tested, setTested] = useState<admin.AssistantTest | null>(null);
  const [noSecret, setNoSecret] = useState(false);
  useEffect(
    () =>
      void (
        v &&
        setF({ enabled: v.enabled, provider: v.provider, address: v.address, model: v.model, hide_button: v.hide_button, limits: { ...v.limits }, api_key: '' })
      ),
    [v],
  );

  const save = async (body: Record<string, unknown>) => {
    setTested(null);
    setNoSecret(false);
    try {
      setV(await admin.saveAssistant(body));
    } catch (e) {
      if (e instanceof ApiError && e.code === 'assistant_no_secret_key') setNoSecret(true);
      throw e;
    }
    toast.info(t('settings.saved'));
  };
  const saving = useSubmit(async () => {
    const { api_key, ...rest } = f!;
    // An empty key field keeps the stored key.
    await save(api_key ? { ...rest, api_key } : rest);
  });
  const forgetting = useSubmit(() => save({ api_key: '' }));
  const testing = useSubmit(async () => {
    setTested(null);
    setTested(await admin.testAssistant());
  });
  const busy = saving.busy || testing.busy || forgetting.busy;

  return (
    <div className="settings">
      <Section title={t('aiadmin.title')} missing={missing} error={error}>
        {v && f && (
          <form className="form two-col" onSubmit={saving.submit} aria-label={t('aiadmin.title')}>
            <p className="hint full">{t('aiadmin.intro')}</p>
            <p className="full" data-testid="assistant-state">
              {t(v.enabled ? (v.configured ? 'aiadmin.state_ready' : 'aiadmin.state_unset') : 'aiadmin.state_off')}
            </p>
            <label className="check full">
              <input type="checkbox" checked={f.enabled} onChange={(e) => setF({ ...f, enabled: e.target.checked })} />
              {t('aiadmin.enabled')}
            </label>
            <label className="check full">
              <input type="checkbox" checked={f.hide_button} onChange={(e) => setF({ ...f, hide_button: e.target.checked })} />
              {t('aiadmin.hide_button')}
            </label>
            <label>
              {t('aiadmin.provider')}
              <select value={f.provider} onChange={(e) => setF({ ...f, provider: e.target.value as Form['provider'] })}>
                {PROVIDERS.map((p) => (
                  <option key={p} value={p}>
                    {t(`aiadmin.provider.${p}`)}
                  </option>
                ))}
              </select>
            </label>
            <label>
              {t('aiadmin.model')}
              <input type="text" autoComplete="off" list="assistant-models" value={f.model} onChange={(e) => setF({ ...f, model: e.target.value })} />
              <datalist id="assistant-models">
                {tested?.models.map((m) => (
                  <option key={m} value={m} />
                ))}
              </datalist>
            </label>
            <label className="full">
              {t('aiadmin.address')}
              <input
                type="url"
                autoComplete="off"
                value={f.address}
                placeholder={t('aiadmin.address_default')}
                onChange={(e) => setF({ ...f, address: e.target.value })}
              />
            </label>
            <label className="full">
              {t('aiadmin.api_key')}
              <input
                type="password"
                autoComplete="new-password"
                value={f.api_key}
                placeholder={v.api_key_set ? t('aiadmin.key_kept') : t('aiadmin.key_none')}
                onChange={(e) => setF({ ...f, api_key: e.target.value })}
              />
            </label>
            {noSecret && (
              <p className="hint full" role="note" data-testid="assistant-no-secret">
                {t('aiadmin.no_secret_help')}
              </p>
            )}
            <fieldset className="full">
              <legend>{t('aiadmin.limits')}</legend>
              <div className="form two-col">
                {LIMITS.map(([k, label]) => (
                  <label key={k}>
                    {t(label)}
                    <input type="number" min={1} value={f.limits[k]} onChange={(e) => setF({ ...f, limits: { ...f.limits, [k]: Number(e.target.value) } })} />
                  </label>
                ))}
              </div>
            </fieldset>
            <p className="hint full">{t('aiadmin.test_hint')}</p>
            <div className="full" aria-live="polite">
              {[saving.error, forgetting.error, testing.error].map(
                (e, i) =>
                  e && (
                    <p key={i} className="error" role="alert">
                      {e}
                    </p>
                  ),
              )}
              {tested && (
                <div className="ok" data-testid="assistant-tested">
                  <p>{t('aiadmin.models', { models: tested.models.join(', ') || '—' })}</p>
                  <p>{t('aiadmin.reply', { reply: tested.reply || '—' })}</p>
                </div>
              )}
            </div>
            <div className="actions full">
              {v.api_key_set && (
                <button type="button" disabled={busy} onClick={() => void forgetting.submit()}>
                  {t('aiadmin.forget_key')}
                </button>
              )}
              <button type="button" disabled={busy} onClick={() => void testing.submit()}>
                {t('aiadmin.test')}
              </button>
              <button type="submit" className="primary" disabled={busy}>
                {t('common.save')}
              </button>
            </div>
          </form>
        )}
      </Section>
    </div>
  );
}
