/**
 * Long press with touch events: iOS fires no `contextmenu` on a held touch, so
 * the press is timed here. A finger that moves (a scroll) cancels it; the
 * click (and, on Android, the context menu) that follow a long press are
 * swallowed so the row is selected, not opened.
 */
import { useRef, type TouchEvent } from 'react';

export const LONG_PRESS_MS = 500;
/** A touch screen is the main pointer: a tap opens, so two quick taps (a dblclick) must not open again. */
export const isCoarsePointer = (): boolean => matchMedia('(pointer: coarse)').matches;
/** How far (px) a finger may drift and still be holding still. */
const SLOP = 10;

export function useLongPress<T>(onLong: (item: T) => void) {
  const s = useRef<{ timer?: ReturnType<typeof setTimeout>; x: number; y: number; item?: T; touching: boolean; fired: boolean }>({
    x: 0,
    y: 0,
    touching: false,
    fired: false,
  });
  const cb = useRef(onLong);
  cb.current = onLong;
  const stop = () => clearTimeout(s.current.timer);
  const fire = () => {
    stop();
    if (s.current.fired || s.current.item === undefined) return;
    s.current.fired = true;
    cb.current(s.current.item);
  };
  return {
    start(item: T, ev: TouchEvent) {
      stop();
      const t = ev.touches[0];
      Object.assign(s.current, { item, touching: ev.touches.length === 1, fired: false, x: t?.clientX ?? 0, y: t?.clientY ?? 0 });
      if (ev.touches.length === 1) s.current.timer = setTimeout(fire, LONG_PRESS_MS);
    },
    move(ev: TouchEvent) {
      const t = ev.touches[0];
      if (!t || Math.hypot(t.clientX - s.current.x, t.clientY - s.current.y) > SLOP) {
        stop();
        s.current.touching = false;
      }
    },
    end(ev: TouchEvent) {
      stop();
      s.current.touching = false;
      // No mouse events, no click: the press selected the row.
      if (s.current.fired && ev.cancelable) ev.preventDefault();
    },
    cancel() {
      stop();
      s.current.touching = false;
    },
    /** A `contextmenu` during a held touch (Android) is the long press itself. */
    contextMenu(): boolean {
      if (!s.current.touching && !s.current.fired) return false;
      fire();
      return true;
    },
    /** True once after a long press: the click it would cause is dropped. */
    swallowClick(): boolean {
      const f = s.current.fired;
      s.current.fired = false;
      return f;
    },
  };
}
