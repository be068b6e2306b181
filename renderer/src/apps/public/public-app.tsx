/**
 * The visitor's side of an app link: the link state, the PIN form (tries left
 * after a wrong PIN, a countdown while locked), the app's surface (the same
 * `Surface` the signed-in UI draws; files by their `ref`), a "sent" screen once
 * a job is accepted (then following that job), and plain screens for a revoked or missing link.
 */
import { useCallback, useEffect, useMemo, useState } from 'react';
import { ApiError } from '../../api/client';
import { useI18n } from '../../i18n';
import { PublicFrame } from '../../auth/public-frame';
import { useCountdown } from '../../auth/countdown';
import { errorText } from '../../ui/toast';
import { Surface } from '../surface/surface';
import { fieldErrorsOf } from '../surface/logic';
import type { FieldErrors, SurfaceData, SurfaceEvent } from '../surface/types';
import { PublicLink, tokenOf, type LinkState, type PageJob, type PublicFile } from './public-api';

type Screen =
  | { kind: 'loading' }
  | { kind: 'pin' }
  | { kind: 'surface'; surface: SurfaceData }
  | { kind: 'submitted'; jobId?: string }
  | { kind: 'revoked' }
  | { kind: 'expired' }
  | { kind: 'gone'; message?: string };

export function PublicApp() {
  const { t } = useI18n();
  const token = tokenOf(location.pathname);
  const link = useMemo(() => (token ? new PublicLink(token) : null), [token]);
  const [screen, setScreen] = useState<Screen>(token ? { kind: 'loading' } : { kind: 'gone' });
  const [info, setInfo] = useState<LinkState | null>(null);
  const [busy, setBusy] = useState(false);
  const [errors, setErrors] = useState<FieldErrors>({});
  const [error, setError] = useState<string | null>(null);

  /** A failure of any call: 410 revoked, 401 PIN needed, 404 gone, else a message on the current screen. */
  const failed = useCallback(
    (e: unknown) => {
      // 410: `expired` (the clock, or the creator revoking it: SPEC "Share link public state") or `revoked`.
      if (e instanceof ApiError && e.status === 410) return setScreen({ kind: e.code === 'expired' ? 'expired' : 'revoked' });
      if (e instanceof ApiError && e.status === 401) return setScreen({ kind: 'pin' });
      if (e instanceof ApiError && e.status === 404) return setScreen({ kind: 'gone', message: e.message });
      setError(errorText(e, t));
    },
    [t],
  );

  const open = useCallback(async () => {
    if (!link) return;
    try {
      const state = await link.state();
      setInfo(state);
      if (state.revoked) return setScreen({ kind: 'revoked' });
      // An ended link is not a PIN question: its state says so before any app block.
      if (state.state === 'expired') return setScreen({ kind: 'expired' });
      if (state.requires_pin && !state.app) return setScreen({ kind: 'pin' });
      const r = await link.event();
      if ('surface' in r) setScreen({ kind: 'surface', surface: r.surface });
      else setScreen({ kind: 'submitted' });
    } catch (e) {
      failed(e);
      if (!(e instanceof ApiError) || ![401, 404, 410].includes(e.status))
        setScreen((s) => (s.kind === 'loading' ? { kind: 'gone', message: errorText(e, t) } : s));
    }
  }, [link, failed, t]);

  useEffect(() => void open(), [open]);

  const onEvent = async (event: SurfaceEvent, actionId: string | undefined, data: Record<string, unknown>, state: unknown) => {
    if (!link) return;
    setBusy(true);
    setError(null);
    try {
      const r = await link.event({ state, event, action_id: actionId, data });
      setErrors({});
      if ('surface' in r && r.surface) setScreen({ kind: 'surface', surface: r.surface });
      else setScreen({ kind: 'submitted', jobId: 'job_id' in r ? r.job_id : undefined });
    } catch (e) {
      setErrors(fieldErrorsOf(e instanceof ApiError ? e : null));
      failed(e);
    } finally {
      setBusy(false);
    }
  };

  const files = info?.app?.files ?? [];
  const fileUrl = (path: string) => {
    // A surface names a file by its ref, or by the exposed copy's name.
    const f = files.find((x) => x.ref === path || x.name === path || path.endsWith(`/${x.name}`));
    return link!.fileUrl(f?.ref ?? path);
  };

  const title = screen.kind === 'surface' ? screen.surface.title || info?.app?.title || t('apps.public.title') : info?.app?.title || t('apps.public.title');
  return (
    <PublicFrame title={screen.kind === 'submitted' ? t('apps.public.submitted_title') : title}>
      <div className="app-public" data-testid="app-public">
        {screen.kind === 'loading' && <p aria-busy="true">{t('common.loading')}</p>}
        {screen.kind === 'pin' && link && (
          <PinForm
            link={link}
            onOpen={() => {
              setScreen({ kind: 'loading' });
              void open();
            }}
          />
        )}
        {screen.kind === 'surface' && (
          <>
            <Surface surface={screen.surface} busy={busy} errors={errors} error={error} onEvent={onEvent} fileUrl={fileUrl} />
            {files.length > 0 && (
              <section aria-label={t('apps.public.files')}>
                <h2>{t('apps.public.files')}</h2>
                <ul>
                  {files.map((f) => (
                    <li key={f.ref}>
                      <a href={link!.fileUrl(f.ref)} target="_blank" rel="noopener noreferrer">
                        {f.name}
                      </a>
                    </li>
                  ))}
                </ul>
              </section>
            )}
          </>
        )}
        {screen.kind === 'submitted' && (
          <p className="ok" role="status">
            {t('apps.public.submitted')}
          </p>
        )}
        {screen.kind === 'submitted' && screen.jobId && link && <JobStatus link={link} id={screen.jobId} files={files} />}
        {screen.kind === 'revoked' && (
          <p className="error" role="alert">
            {t('apps.public.revoked')}
          </p>
        )}
        {screen.kind === 'expired' && (
          <p className="error" role="alert">
            {t('apps.public.expired')}
          </p>
        )}
        {screen.kind === 'gone' && (
          <p className="error" role="alert">
            {screen.message || t('apps.public.gone')}
          </p>
        )}
      </div>
    </PublicFrame>
  );
}

/** Follows the job a submit queued (every second until it ends): progress, then done or why not. */
function JobStatus({ link, id, files }: { link: PublicLink; id: string; files: PublicFile[] }) {
  const { t } = useI18n();
  const [job, setJob] = useState<PageJob | null>(null);
  useEffect(() => {
    let stop = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const poll = async () => {
      const j = await link.job(id).catch(() => null);
      if (stop) return;
      if (j) setJob(j);
      // A failed read (the link ended meanwhile) stops following; the sent screen stays.
      if (j && (j.status === 'pending' || j.status === 'running')) timer = setTimeout(() => void poll(), 1000);
    };
    void poll();
    return () => {
      stop = true;
      clearTimeout(timer);
    };
  }, [link, id]);
  if (!job) return null;
  const text =
    job.status === 'ok'
      ? t('apps.public.job_ok')
      : job.status === 'failed'
        ? t('apps.public.job_failed', { reason: job.error_text ?? '' })
        : job.status === 'cancelled'
          ? t('apps.public.job_cancelled')
          : t('apps.public.job_running', { n: Math.round(job.progress * 100) });
  return (
    <div data-testid="app-public-job">
      <p className={job.status === 'failed' || job.status === 'cancelled' ? 'error' : 'ok'} role="status" aria-live="polite">
        {text}
      </p>
      {job.status === 'ok' && job.message && <p>{job.message}</p>}
      {job.outputs.length > 0 && (
        <ul>
          {job.outputs.map((o) => (
            <li key={o.ref}>
              <a href={link.fileUrl(o.ref)} target="_blank" rel="noopener noreferrer">
                {files.find((f) => f.ref === o.ref)?.name ?? o.ref}
              </a>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

function PinForm({ link, onOpen }: { link: PublicLink; onOpen: () => void }) {
  const { t } = useI18n();
  const [pin, setPin] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [until, setUntil] = useState<number | null>(null);
  const left = useCountdown(until);
  const [busy, setBusy] = useState(false);
  return (
    <form
      className="form"
      onSubmit={async (e) => {
        e.preventDefault();
        setBusy(true);
        setError(null);
        try {
          await link.pin(pin);
          onOpen();
        } catch (err) {
          if (err instanceof ApiError && err.code === 'pin_wrong') {
            const n = Number(err.details.tries_left ?? err.params.tries_left);
            setError(Number.isFinite(n) ? t('apps.public.pin_wrong', { n }) : t('apps.public.pin_wrong_plain'));
          } else if (err instanceof ApiError && err.status === 429) {
            const s = Number(err.details.retry_after ?? err.params.retry_after ?? err.retryAfter ?? 60);
            setUntil(Date.now() + s * 1000);
          } else setError(errorText(err, t));
        } finally {
          setBusy(false);
        }
      }}
    >
      <p>{t('apps.public.pin_title')}</p>
      <label>
        {t('apps.public.pin')}
        <input data-autofocus inputMode="numeric" autoComplete="one-time-code" className="pin" value={pin} onChange={(e) => setPin(e.target.value)} />
      </label>
      {left > 0 && (
        <p className="error" role="alert">
          {t('apps.public.locked', { s: left })}
        </p>
      )}
      {error && left === 0 && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      <div className="actions">
        <button type="submit" className="primary" disabled={busy || !pin || left > 0}>
          {t('apps.public.pin_submit')}
        </button>
      </div>
    </form>
  );
}
