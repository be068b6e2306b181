/**
 * Closing a preview puts keyboard focus back on the listing, at the row of the
 * file it showed (the listbox keeps focus and names the row through
 * `aria-activedescendant`), instead of leaving it on <body>.
 */
import { useEffect, useState, type Dispatch, type RefObject, type SetStateAction } from 'react';
import type { Entry } from '../api/types';
import * as sel from './selection';
import { keyOf } from './file-list';

export function useBackToRow(
  listRef: RefObject<HTMLElement | null>,
  dialogOpen: boolean,
  keys: readonly string[],
  setSelection: Dispatch<SetStateAction<sel.Selection>>,
) {
  const [backTo, setBackTo] = useState<string | null>(null);
  useEffect(() => {
    // Only once the dialog has left: a modal <dialog> makes the rest of the page inert while it is open.
    if (backTo === null || dialogOpen) return;
    listRef.current?.querySelector<HTMLElement>('[role=listbox]')?.focus();
    setBackTo(null);
  }, [backTo, dialogOpen, listRef]);
  /** Marks `e`'s row as the one to return to (focused; selected unless it already is); the caller then closes the dialog. */
  return (e: Entry) => {
    const k = keyOf(e);
    setSelection((s) => (s.selected.has(k) ? { ...s, focus: k } : sel.click(s, keys, k)));
    setBackTo(k);
  };
}
