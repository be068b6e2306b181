/**
 * Short notices (success and errors) in one polite live region, so screen
 * readers announce them; errors stay until dismissed, others fade after 5 s.
 */
import { createContext, useCallback, useContext, useMemo, useState, type ReactNode } from 'react';
import { ApiError } from '../api/client';
import { useI18n, type Translate } from '../i18n';

type Kind = 'info' | 'error';
interface Toast {
  id: number;
  kind: Kind;
  text: string;
}
interface Api {
  info: (text: string) => void;
  error: (e: unknown) => void;
}

const Ctx = createContext<Api>({ info: () => {}, error: () => {} });
export const useToast = (): Api => useContext(Ctx);

/** The sentence to show for a failure: the envelope's message as sent, or our network notice. */
export function errorText(e: unknown, t: Translate): string {
  if (e instanceof ApiError) return e.code === 'network' ? t('err.network') : e.message;
  return e instanceof Error ? e.message : String(e);
}

let seq = 0;

export function ToastProvider({ children }: { children: ReactNode }) {
  const { t } = useI18n();
  const [toasts, setToasts] = useState<Toast[]>([]);
  const dismiss = useCallback((id: number) => setToasts((l) => l.filter((x) => x.id !== id)), []);
  const push = useCallback(
    (kind: Kind, text: string) => {
      const id = ++seq;
      setToasts((l) => [...l.slice(-4), { id, kind, text }]);
      if (kind === 'info') setTimeout(() => dismiss(id), 5000);
    },
    [dismiss],
  );
  const api = useMemo<Api>(() => ({ info: (s) => push('info', s), error: (e) => push('error', errorText(e, t)) }), [push, t]);
  return (
    <Ctx.Provider value={api}>
      {children}
      <div className="toasts" role="status" aria-live="polite">
        {toasts.map((x) => (
          <div key={x.id} className={`toast ${x.kind}`} role={x.kind === 'error' ? 'alert' : undefined}>
            <span>{x.text}</span>
            <button type="button" className="icon-btn" aria-label={t('common.close')} onClick={() => dismiss(x.id)}>
              ✕
            </button>
          </div>
        ))}
      </div>
    </Ctx.Provider>
  );
}
