/**
 * A menu at the pointer (or at the focused row for Shift+F10 / the Menu key):
 * arrow keys move between items, Escape or a click outside closes it and
 * returns focus to where it came from.
 */
import { useEffect, useLayoutEffect, useRef, useState } from 'react';

export interface MenuItem {
  label: string;
  onSelect: () => void;
  danger?: boolean;
  disabled?: boolean;
  shortcut?: string;
  /** An app's icon (a same-origin URL). */
  icon?: string | null;
  /** A line above the item (the start of the apps' group). */
  separator?: boolean;
}

export function ContextMenu({ x, y, items, label, onClose }: { x: number; y: number; items: MenuItem[]; label: string; onClose: () => void }) {
  const ref = useRef<HTMLUListElement>(null);
  const [pos, setPos] = useState({ x, y });
  const opener = useRef<Element | null>(document.activeElement);

  useLayoutEffect(() => {
    const r = ref.current!.getBoundingClientRect();
    // Keep the whole menu on screen, also on a phone.
    setPos({ x: Math.max(4, Math.min(x, innerWidth - r.width - 4)), y: Math.max(4, Math.min(y, innerHeight - r.height - 4)) });
    ref.current!.querySelector<HTMLElement>('[role=menuitem]:not([aria-disabled=true])')?.focus();
  }, [x, y]);

  // The parent re-renders while the menu is open (progress, realtime): the listeners and the
  // focus hand-back must belong to the menu's lifetime, not to each new onClose identity.
  const close = useRef(onClose);
  close.current = onClose;
  useEffect(() => {
    const away = (e: Event) => {
      if (!ref.current?.contains(e.target as Node)) close.current();
    };
    const blur = () => close.current();
    document.addEventListener('mousedown', away);
    window.addEventListener('blur', blur);
    return () => {
      document.removeEventListener('mousedown', away);
      window.removeEventListener('blur', blur);
      (opener.current as HTMLElement | null)?.focus?.();
    };
  }, []);

  const onKey = (e: React.KeyboardEvent) => {
    const list = [...ref.current!.querySelectorAll<HTMLElement>('[role=menuitem]:not([aria-disabled=true])')];
    const i = list.indexOf(document.activeElement as HTMLElement);
    if (e.key === 'ArrowDown') list[(i + 1) % list.length]?.focus();
    else if (e.key === 'ArrowUp') list[(i - 1 + list.length) % list.length]?.focus();
    else if (e.key === 'Home') list[0]?.focus();
    else if (e.key === 'End') list[list.length - 1]?.focus();
    else if (e.key === 'Escape' || e.key === 'Tab') onClose();
    else return;
    e.preventDefault();
    e.stopPropagation();
  };

  return (
    <ul ref={ref} className="menu" role="menu" aria-label={label} style={{ left: pos.x, top: pos.y }} onKeyDown={onKey}>
      {items.map((it, i) => (
        <li
          key={`${i}:${it.label}`}
          role="menuitem"
          tabIndex={-1}
          aria-disabled={it.disabled || undefined}
          className={[it.danger ? 'danger' : '', it.separator ? 'sep-above' : ''].filter(Boolean).join(' ') || undefined}
          onClick={() => {
            if (it.disabled) return;
            onClose();
            it.onSelect();
          }}
          onKeyDown={(e) => {
            if ((e.key === 'Enter' || e.key === ' ') && !it.disabled) {
              e.preventDefault();
              onClose();
              it.onSelect();
            }
          }}
        >
          <span>
            {it.icon && <img className="menu-icon" src={it.icon} alt="" width={16} height={16} />}
            {it.label}
          </span>
          {it.shortcut && <kbd>{it.shortcut}</kbd>}
        </li>
      ))}
    </ul>
  );
}
