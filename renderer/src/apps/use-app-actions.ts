/** The app actions (and open rules) for the current selection, from the five-minute cache of apps-api. */
import { useEffect, useState } from 'react';
import { actionsFor, selectionKey, type ActionsAnswer } from './apps-api';

export function useAppActions(paths: string[], enabled: boolean): ActionsAnswer | null {
  const [answer, setAnswer] = useState<{ key: string; a: ActionsAnswer } | null>(null);
  const key = selectionKey(paths);
  // biome-ignore lint/correctness/useExhaustiveDependencies: `paths` is a new array each render; its text (`key`) is the dependency
  useEffect(() => {
    if (!enabled || !paths.length) return setAnswer(null);
    let live = true;
    // A short pause: dragging a selection with Shift+arrows asks only for where it stops.
    const h = setTimeout(
      () =>
        actionsFor(paths).then(
          (a) => live && setAnswer({ key, a }),
          () => live && setAnswer(null),
        ),
      120,
    );
    return () => {
      live = false;
      clearTimeout(h);
    };
  }, [key, enabled]);
  return answer && answer.key === key ? answer.a : null;
}

/** Whether the person has any app action at all (the toolbar shows its Apps menu only then). */
export function useHasAppActions(enabled: boolean): boolean {
  const [has, setHas] = useState(false);
  useEffect(() => {
    if (!enabled) return setHas(false);
    let live = true;
    actionsFor([]).then(
      (a) => live && setHas(a.actions.length > 0),
      () => live && setHas(false),
    );
    return () => {
      live = false;
    };
  }, [enabled]);
  return has;
}
