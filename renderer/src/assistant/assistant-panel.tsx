/**
 * The assistant panel beside the file list (its own lazily loaded chunk):
 * a chat whose answers stream in as escaped Markdown, step cards with Undo,
 * approval cards whose decision continues the stream, the person's
 * conversations, and their "ask before every change" choice. Enter sends,
 * Shift+Enter starts a new line; the message box has focus when it opens.
 */
import { useEffect, useRef, useState, type FormEvent, type KeyboardEvent } from 'react';
import { useI18n } from '../i18n';
import { errorText } from '../ui/toast';
import { ConfirmDialog } from '../ui/forms';
import { baseName } from '../lib/ui-path';
import MarkdownView from '../files/markdown-view';
import * as api from './assistant-api';
import { applyEvent, fromConversation, markUndone, summary, type Item } from './chat-items';

interface Props {
  /** The file list's selection, offered as attachments. */
  paths: string[];
  /** A step changed files (or was undone): the list re-reads its folder. */
  onChanged: () => void;
  onClose: () => void;
}

export default function AssistantPanel({ paths, onChanged, onClose }: Props) {
  const { t } = useI18n();
  const [items, setItems] = useState<Item[]>([]);
  const [convId, setConvId] = useState<string | null>(null);
  const [text, setText] = useState('');
  const [attach, setAttach] = useState(true);
  const [busy, setBusy] = useState(false);
  const [confirmAll, setConfirmAll] = useState(false);
  const [list, setList] = useState<api.ConversationSummary[] | null>(null);
  const [askDeleteAll, setAskDeleteAll] = useState(false);
  const input = useRef<HTMLTextAreaElement>(null);
  const log = useRef<HTMLDivElement>(null);
  const abort = useRef<AbortController | null>(null);

  useEffect(() => {
    input.current?.focus();
    api.state().then(
      (s) => setConfirmAll(s.confirm_all),
      () => {},
    );
    return () => abort.current?.abort();
  }, []);
  useEffect(() => {
    log.current?.scrollTo({ top: log.current.scrollHeight });
  }, [items]);

  const fail = (e: unknown) => {
    if ((e as Error)?.name === 'AbortError') return;
    const code = (e as { code?: string }).code ?? 'error';
    setItems((l) => [...l, { kind: 'error', code, text: errorText(e, t) }]);
  };

  /** Runs one event stream (chat or decide) into the items. */
  const run = async (go: (onEvent: (e: api.ChatEvent) => void, signal: AbortSignal) => Promise<void>) => {
    const ac = new AbortController();
    abort.current = ac;
    setBusy(true);
    try {
      await go((ev) => {
        if (ev.type === 'conversation') setConvId(ev.id);
        if (ev.type === 'step' && ev.status === 'done') onChanged();
        setItems((l) => applyEvent(l, ev));
      }, ac.signal);
    } catch (e) {
      fail(e);
    } finally {
      setBusy(false);
      if (abort.current === ac) abort.current = null;
      if (list) void refreshList();
      input.current?.focus();
    }
  };

  const send = (e?: FormEvent) => {
    e?.preventDefault();
    const message = text.trim();
    if (!message || busy) return;
    const attached = attach ? paths : [];
    setText('');
    // The server turns down a step still waiting when the person writes again.
    setItems((l) => [
      ...l.map((it) => (it.kind === 'approval' && !it.decided ? { ...it, decided: 'rejected' as const } : it)),
      { kind: 'user', text: message, paths: attached },
    ]);
    void run((onEvent, signal) =>
      api.chat({ conversation_id: convId ?? undefined, message, ...(attached.length ? { paths: attached } : {}) }, onEvent, signal),
    );
  };

  const onKeyDown = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) send(e);
    else if (e.key === 'Escape' && !text) onClose();
  };

  const decide = (approve: boolean) => convId && void run((onEvent, signal) => api.decide(convId, approve, onEvent, signal));

  const undo = async (id: string) => {
    if (!convId) return;
    try {
      await api.undo(convId, id);
      setItems((l) => markUndone(l, id));
      onChanged();
    } catch (e) {
      fail(e);
    }
  };

  const refreshList = async () => {
    try {
      setList(await api.conversations());
    } catch (e) {
      fail(e);
    }
  };
  const open = async (id: string) => {
    try {
      const c = await api.conversation(id);
      setConvId(c.id);
      setItems(fromConversation(c));
      setList(null);
      input.current?.focus();
    } catch (e) {
      fail(e);
    }
  };
  const startNew = () => {
    abort.current?.abort();
    setConvId(null);
    setItems([]);
    input.current?.focus();
  };
  const removeOne = async (id: string) => {
    try {
      await api.remove(id);
      if (id === convId) startNew();
      await refreshList();
    } catch (e) {
      fail(e);
    }
  };
  const removeAll = async () => {
    try {
      await api.remove();
      startNew();
      setList([]);
    } catch (e) {
      fail(e);
    }
  };
  const toggleConfirmAll = async (on: boolean) => {
    setConfirmAll(on);
    try {
      setConfirmAll((await api.setConfirmAll(on)).confirm_all);
    } catch (e) {
      setConfirmAll(!on);
      fail(e);
    }
  };

  const status = (s: string) => (['done', 'failed', 'rejected', 'undone'].includes(s) ? t(`assistant.status.${s as 'done'}`) : s);

  return (
    <aside className="assistant" aria-label={t('assistant.title')}>
      <div className="assistant-head">
        <h2>{t('assistant.title')}</h2>
        <button type="button" onClick={startNew}>
          {t('assistant.new')}
        </button>
        <button type="button" aria-expanded={!!list} onClick={() => (list ? setList(null) : void refreshList())}>
          {t('assistant.conversations')}
        </button>
        <button type="button" className="icon-btn" aria-label={t('common.close')} title={t('common.close')} onClick={onClose}>
          ×
        </button>
      </div>
      {list && (
        <section className="assistant-list" aria-label={t('assistant.conversations')}>
          {list.length === 0 ? (
            <p className="muted">{t('assistant.no_conversations')}</p>
          ) : (
            <ul>
              {list.map((c) => (
                <li key={c.id} className="line">
                  <button type="button" className="link name-text" aria-current={c.id === convId ? 'true' : undefined} onClick={() => void open(c.id)}>
                    {c.title || t('assistant.untitled')}
                  </button>
                  <button
                    type="button"
                    className="icon-btn"
                    aria-label={t('assistant.delete_one', { title: c.title })}
                    title={t('common.delete')}
                    onClick={() => void removeOne(c.id)}
                  >
                    🗑
                  </button>
                </li>
              ))}
            </ul>
          )}
          {list.length > 0 && (
            <button type="button" className="danger" onClick={() => setAskDeleteAll(true)}>
              {t('assistant.delete_all')}
            </button>
          )}
        </section>
      )}
      <div className="assistant-log" ref={log} role="log" aria-label={t('assistant.log')} aria-busy={busy}>
        {items.length === 0 && <p className="muted">{t('assistant.intro')}</p>}
        {items.map((it, i) => {
          if (it.kind === 'user') {
            return (
              <div key={i} className="msg user" data-testid="assistant-user">
                <p>{it.text}</p>
                {it.paths.length > 0 && <p className="muted">{t('assistant.attached', { names: it.paths.map(baseName).join(', ') })}</p>}
              </div>
            );
          }
          if (it.kind === 'answer')
            return (
              <div key={i} className="msg answer" data-testid="assistant-answer">
                <MarkdownView text={it.text} images="ours" />
              </div>
            );
          if (it.kind === 'stopped')
            return (
              <p key={i} className="muted" data-testid="assistant-stopped">
                {t(`assistant.stopped.${it.reason}`)}
              </p>
            );
          if (it.kind === 'error')
            return (
              <p key={i} className="error" role="alert" data-testid="assistant-error">
                {it.text}
              </p>
            );
          if (it.kind === 'step') {
            return (
              <div key={i} className={`card step ${it.status}`} data-testid="assistant-step">
                <p>
                  <code>{it.tool}</code> <span>{summary(it.input)}</span>
                </p>
                <p className="line">
                  <span className="muted grow">{status(it.status)}</span>
                  {it.undo && it.id && (
                    <button type="button" disabled={busy} onClick={() => void undo(it.id!)}>
                      {t('assistant.undo')}
                    </button>
                  )}
                </p>
              </div>
            );
          }
          return (
            <div key={i} className="card approval" data-testid="assistant-approval" role="group" aria-label={t('assistant.approval', { tool: it.tool })}>
              <p>
                {t('assistant.approval', { tool: it.tool })}: <code>{summary(it.input)}</code>
              </p>
              {!it.reversible && <p className="muted">{t('assistant.irreversible')}</p>}
              {it.decided ? (
                <p className="muted">{t(it.decided === 'approved' ? 'assistant.approved' : 'assistant.rejected')}</p>
              ) : (
                <p className="actions">
                  <button type="button" className="primary" disabled={busy} onClick={() => decide(true)}>
                    {t('assistant.approve')}
                  </button>
                  <button type="button" disabled={busy} onClick={() => decide(false)}>
                    {t('assistant.reject')}
                  </button>
                </p>
              )}
            </div>
          );
        })}
        {busy && (
          <p className="muted" aria-live="polite">
            {t('assistant.working')}
          </p>
        )}
      </div>
      <form className="assistant-form" onSubmit={send}>
        {paths.length > 0 && (
          <label className="check">
            <input type="checkbox" checked={attach} onChange={(e) => setAttach(e.target.checked)} />
            {t('assistant.attach', { n: paths.length })}
          </label>
        )}
        <label className="sr-only" htmlFor="assistant-message">
          {t('assistant.message')}
        </label>
        <textarea
          id="assistant-message"
          ref={input}
          rows={3}
          value={text}
          placeholder={t('assistant.placeholder')}
          onChange={(e) => setText(e.target.value)}
          onKeyDown={onKeyDown}
        />
        <div className="line">
          <label className="check grow">
            <input type="checkbox" checked={confirmAll} onChange={(e) => void toggleConfirmAll(e.target.checked)} />
            {t('assistant.confirm_all')}
          </label>
          {busy && (
            <button type="button" onClick={() => abort.current?.abort()}>
              {t('assistant.stop')}
            </button>
          )}
          <button type="submit" className="primary" disabled={busy || !text.trim()}>
            {t('assistant.send')}
          </button>
        </div>
      </form>
      {askDeleteAll && (
        <ConfirmDialog
          title={t('assistant.delete_all')}
          text={t('assistant.delete_all_confirm')}
          confirmLabel={t('common.delete')}
          danger
          onConfirm={() => void removeAll()}
          onClose={() => setAskDeleteAll(false)}
        />
      )}
    </aside>
  );
}
