/**
 * Long-running operations (copies, extractions, app jobs): progress, time left,
 * cancel; an app job also shows its label, message, results (links to their
 * folders) and, once done, what it asks to open.
 */
import { useEffect } from 'react';
import type { Operation } from '../api/types';
import { useI18n, type MessageKey } from '../i18n';
import { useToast } from '../ui/toast';
import { cancelOp, listOps } from './file-api';
import { setOps, setOpsPanelOpen, useOps, useOpsPanelOpen } from './ops-store';
import { navigate } from '../lib/router';
import { baseName, parentPath, routeOf } from '../lib/ui-path';
import { appRoute } from '../apps/app-route';

const RUNNING = new Set(['queued', 'running', 'pending']);

export function OpsPanel() {
  const { t } = useI18n();
  const toast = useToast();
  const ops = useOps();
  const open = useOpsPanelOpen();
  const setOpen = setOpsPanelOpen;
  const running = ops.filter((o) => RUNNING.has(o.status)).length;

  useEffect(() => {
    listOps().then(
      (r) => setOps(r.ops ?? []),
      () => {},
    );
  }, []);
  // The stream carries op frames; polling while something runs covers a server without them.
  useEffect(() => {
    if (!running) return;
    const h = setInterval(
      () =>
        listOps().then(
          (r) => setOps(r.ops ?? []),
          () => {},
        ),
      3000,
    );
    return () => clearInterval(h);
  }, [running]);

  if (!ops.length) return null;
  const status = (o: Operation) => {
    const k = `ops.status.${o.status}` as MessageKey;
    return t(k) === k ? o.status : t(k);
  };
  return (
    <section className="panel ops" aria-label={t('ops.title')}>
      <button type="button" className="panel-head" aria-expanded={open} onClick={() => setOpen(!open)}>
        {t('ops.title')} {running > 0 && <span className="badge">{running}</span>}
      </button>
      {open && (
        <ul>
          {ops.slice(0, 50).map((o) => (
            <li key={o.id}>
              <div className="line">
                <span>{o.label ?? o.kind}</span>
                <span className="muted">
                  {status(o)}
                  {o.eta_seconds ? ` · ${t('ops.eta', { s: Math.round(o.eta_seconds) })}` : ''}
                </span>
                {RUNNING.has(o.status) && (
                  <button type="button" className="icon-btn" aria-label={t('ops.cancel')} onClick={() => cancelOp(o.id).catch(toast.error)}>
                    ✕
                  </button>
                )}
              </div>
              <progress max={1} value={o.progress ?? 0} aria-label={o.label ?? o.kind} />
              {o.message && <p className="muted op-message">{o.message}</p>}
              {o.status === 'failed' && <p className="error">{o.error_text ?? o.error}</p>}
              {!!o.outputs?.length && (
                <p className="op-outputs">
                  {t('ops.outputs')}:{' '}
                  {o.outputs.slice(0, 20).map((x, i) => (
                    <span key={x.path}>
                      {i > 0 && ', '}
                      <a
                        href={routeOf(parentPath(x.path))}
                        title={x.path}
                        onClick={(e) => {
                          e.preventDefault();
                          navigate(routeOf(parentPath(x.path)));
                        }}
                      >
                        {baseName(x.path)}
                      </a>
                    </span>
                  ))}
                </p>
              )}
              {o.status === 'ok' && o.open && (
                <button
                  type="button"
                  onClick={() => navigate(o.open!.view && o.plugin ? appRoute(o.plugin, o.open!.view, [o.open!.path]) : routeOf(parentPath(o.open!.path)))}
                >
                  {t('ops.open')}
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
