/**
 * An open app view in the signed-in UI: it holds the surface, sends its events
 * (`POST .../views/{plugin}/{view}/event` with the surface's `state`), shows a
 * refused submit at its fields, and hands a started job to the ops panel.
 * Placement: `dialog` (modal), `panel` (beside the listing), `page` (AppPage).
 */
import { useCallback, useEffect, useMemo, useState, type ReactNode } from 'react';
import { ApiError } from '../api/client';
import { useI18n } from '../i18n';
import { Dialog } from '../ui/dialog';
import { errorText } from '../ui/toast';
import { listOps, rawUrl } from '../files/file-api';
import { setOps, showOpsPanel } from '../files/ops-store';
import { searchUsers, sendEvent } from './apps-api';
import { fieldErrorsOf } from './surface/logic';
import { Surface } from './surface/surface';
import type { FieldErrors, SurfaceData, SurfaceEvent } from './surface/types';
import { AppFileChooser } from './file-chooser';
import { withBase } from '../lib/base';

export interface OpenView {
  plugin: string;
  view: string;
  paths: string[];
  surface: SurfaceData;
  placement: 'dialog' | 'panel' | 'page';
  /** The action's or view's label, when the surface has no title. */
  title: string;
}

/** The event loop of one open view; `onJob` hears a started job (the view closes unless the app sent a new surface). */
export function useViewEvents(v: Pick<OpenView, 'plugin' | 'view' | 'paths'>, first: SurfaceData, onJob: (op: string, next?: SurfaceData) => void) {
  const { t } = useI18n();
  const [surface, setSurface] = useState(first);
  const [busy, setBusy] = useState(false);
  const [errors, setErrors] = useState<FieldErrors>({});
  const [error, setError] = useState<string | null>(null);
  const onEvent = useCallback(
    async (event: SurfaceEvent, actionId: string | undefined, data: Record<string, unknown>, state: unknown) => {
      setBusy(true);
      setError(null);
      try {
        const r = await sendEvent(v.plugin, v.view, { paths: v.paths, state, event, action_id: actionId, data });
        setErrors({});
        if ('op' in r && r.op) {
          listOps().then(
            (l) => setOps(l.ops ?? []),
            () => {},
          );
          showOpsPanel();
          onJob(r.op, r.surface);
          if (r.surface) setSurface(r.surface);
        } else if ('surface' in r && r.surface) setSurface(r.surface);
      } catch (e) {
        const byField = fieldErrorsOf(e instanceof ApiError ? e : null);
        setErrors(byField);
        // A refusal naming fields is shown at them; the sentence too, for a field the surface does not draw.
        setError(errorText(e, t));
      } finally {
        setBusy(false);
      }
    },
    [v.plugin, v.view, v.paths, onJob, t],
  );
  return { surface, busy, errors, error, onEvent };
}

const people = (plugin: string) => (q: string) => searchUsers(plugin, q).then((r) => r.users);

/** The surface with the signed-in UI's parts: raw file URLs, the user search, the file chooser. */
export function ViewBody({ v, onJob, onSurface }: { v: OpenView; onJob: (op: string, next?: SurfaceData) => void; onSurface?: (s: SurfaceData) => void }) {
  const s = useViewEvents(v, v.surface, onJob);
  // The frame around the body (dialog, panel, page heading) shows the title of the surface shown now.
  useEffect(() => onSurface?.(s.surface), [s.surface, onSurface]);
  const search = useMemo(() => people(v.plugin), [v.plugin]);
  return (
    <Surface
      surface={s.surface}
      busy={s.busy}
      errors={s.errors}
      error={s.error}
      onEvent={s.onEvent}
      fileUrl={(p) => withBase(rawUrl(p))}
      searchPeople={search}
      FileChooser={AppFileChooser}
    />
  );
}

/** A view in a modal dialog or a side panel; it closes when the app starts a job without a new surface. */
export function AppViewFrame({ v, onClose }: { v: OpenView; onClose: () => void }) {
  const { t } = useI18n();
  const onJob = useCallback(
    (_op: string, next?: SurfaceData) => {
      if (!next) onClose();
    },
    [onClose],
  );
  const [shown, setShown] = useState(v.surface);
  const title = shown.title || v.title;
  const body: ReactNode = <ViewBody v={v} onJob={onJob} onSurface={setShown} />;
  if (v.placement === 'panel')
    return (
      <aside className="panel app-panel" aria-label={title}>
        <header className="dialog-head">
          <h2>{title}</h2>
          <button type="button" className="icon-btn" aria-label={t('apps.close_panel')} onClick={onClose}>
            ✕
          </button>
        </header>
        {body}
      </aside>
    );
  return (
    <Dialog title={title} wide onClose={onClose}>
      {body}
    </Dialog>
  );
}
