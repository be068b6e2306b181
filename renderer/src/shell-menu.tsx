/**
 * The header's sections, language, theme and sign-out. Wide screens show them
 * in the bar; phones fold them behind one menu button so the bar stays one
 * short row (the same elements either way: no twin navigation). The menu
 * closes on a pick, on Escape (focus back to the button) and on a tap outside.
 */
import { useEffect, useRef, useState, type ReactNode } from 'react';
import { useI18n } from './i18n';
import { ToolIcon } from './ui/tool-icons';

export function ShellMenu({ section, children }: { section: string; children: ReactNode }) {
  const { t } = useI18n();
  const [open, setOpen] = useState(false);
  const button = useRef<HTMLButtonElement>(null);
  const panel = useRef<HTMLDivElement>(null);

  // A section change (a link in the menu was followed) closes it.
  useEffect(() => setOpen(false), [section]);
  useEffect(() => {
    if (!open) return;
    const away = (e: Event) => {
      const target = e.target as Node;
      if (!panel.current?.contains(target) && !button.current?.contains(target)) setOpen(false);
    };
    const key = (e: KeyboardEvent) => {
      if (e.key !== 'Escape') return;
      setOpen(false);
      button.current?.focus();
    };
    document.addEventListener('pointerdown', away);
    document.addEventListener('keydown', key);
    return () => {
      document.removeEventListener('pointerdown', away);
      document.removeEventListener('keydown', key);
    };
  }, [open]);

  return (
    <>
      <button
        ref={button}
        type="button"
        className="icon-btn phone-only shell-menu-btn"
        aria-expanded={open}
        aria-controls="shell-menu"
        aria-label={t('nav.menu')}
        title={t('nav.menu')}
        onClick={() => setOpen((o) => !o)}
      >
        <ToolIcon name="menu" size={22} />
      </button>
      <div ref={panel} id="shell-menu" className={`shell-menu${open ? ' open' : ''}`} onClick={(e) => (e.target as HTMLElement).closest('a') && setOpen(false)}>
        {children}
      </div>
    </>
  );
}
