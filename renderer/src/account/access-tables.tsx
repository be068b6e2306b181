/**
 * The tables of the "Sessions & keys" page, shared with the admin's view of
 * a person: signed-in sessions (device in plain words, address, times, this
 * device marked) and API keys (what each may do, its folder, times, state).
 * Each row's action is the caller's: these only show and ask.
 */
import type { ApiKeyView, SessionView } from '../api/types';
import { useI18n, type MessageKey, type Translate } from '../i18n';
import { formatDate } from '../lib/format';
import { ActionsTableHead } from '../ui/table-head';
import { describeAgent } from './user-agent';
import { verbsInWords } from './permission-words';

/** "Firefox 128 on Linux", or what is known of it. */
export function agentText(ua: string | null, t: Translate): string {
  const { browser, os } = describeAgent(ua);
  if (browser && os) return t('access.agent', { browser, os });
  return browser ?? os ?? t('access.agent_unknown');
}

const KIND: Record<string, MessageKey> = { login: 'access.kind.login', oidc: 'access.kind.oidc', desktop: 'access.kind.desktop', signup: 'access.kind.signup' };

export function SessionsTable({ sessions, onRevoke }: { sessions: SessionView[]; onRevoke: (s: SessionView) => void }) {
  const { t, lang } = useI18n();
  if (!sessions.length) return <p className="muted">{t('access.sessions.none')}</p>;
  return (
    <div className="table-wrap">
      <table className="table" data-testid="sessions">
        <ActionsTableHead columns={[t('access.device'), t('access.address'), t('access.signed_in'), t('access.last_seen')]} />
        <tbody>
          {sessions.map((s) => (
            <tr key={s.id}>
              <td title={s.ua ?? undefined}>
                {agentText(s.ua, t)}
                {s.current && (
                  <>
                    {' '}
                    <span className="pill active">{t('access.this_device')}</span>
                  </>
                )}
                <div className="hint">{KIND[s.kind] ? t(KIND[s.kind]) : s.kind}</div>
              </td>
              <td>{s.ip ?? ''}</td>
              <td>{formatDate(s.created_at, lang)}</td>
              <td>{formatDate(s.last_seen_at, lang)}</td>
              <td>
                <button type="button" className="small danger" onClick={() => onRevoke(s)}>
                  {t('access.sessions.revoke')}
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function KeysTable({ keys, onRevoke }: { keys: ApiKeyView[]; onRevoke: (k: ApiKeyView) => void }) {
  const { t, lang } = useI18n();
  if (!keys.length) return <p className="muted">{t('keys.none')}</p>;
  return (
    <div className="table-wrap">
      <table className="table" data-testid="keys">
        <ActionsTableHead
          columns={[t('keys.name'), t('keys.may'), t('keys.folder'), t('keys.created'), t('keys.expires'), t('keys.last_used'), t('users.status')]}
        />
        <tbody>
          {keys.map((k) => (
            <tr key={k.id}>
              <td>
                {k.name}
                {k.kind === 'desktop' && (
                  <>
                    {' '}
                    <span className="pill">{t('keys.desktop')}</span>
                  </>
                )}
              </td>
              <td>{k.kind === 'desktop' ? t('keys.desktop_may') : verbsInWords(k.verbs, t)}</td>
              <td className="wrap">{k.root ?? t('keys.everywhere')}</td>
              <td>{formatDate(k.created_at, lang)}</td>
              <td>{k.expires_at ? formatDate(k.expires_at, lang) : t('common.never')}</td>
              <td>{k.last_used_at ? t('keys.used_from', { date: formatDate(k.last_used_at, lang), ip: k.last_used_ip ?? '?' }) : t('common.never')}</td>
              <td>
                <span className={`pill ${k.state}`}>{t(`keys.state.${k.state}`)}</span>
              </td>
              <td>
                {k.state === 'active' && (
                  <button type="button" className="small danger" aria-label={t('keys.revoke_named', { name: k.name })} onClick={() => onRevoke(k)}>
                    {t('keys.revoke')}
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
