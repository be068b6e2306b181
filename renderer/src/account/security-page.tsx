/**
 * "Account security": the person's second factors. An authenticator app
 * (TOTP, enrolled with a QR code or the key typed by hand), recovery codes
 * (shown once, regenerated on demand), passkeys with names. Every change asks
 * for the current password first.
 */
import { useCallback, useEffect, useState } from 'react';
import type { MfaStatus } from '../api/types';
import { useI18n } from '../i18n';
import { formatDate } from '../lib/format';
import { errorText, useToast } from '../ui/toast';
import * as mfa from '../auth/mfa-api';
import { CodesDialog, PasskeyDialog, PasswordDialog, TotpDialog } from './security-dialogs';

type Open =
  | { kind: 'totp' }
  | { kind: 'passkey' }
  | { kind: 'codes'; codes: string[] }
  | { kind: 'password'; title: string; text: string; submit: string; run: (pw: string) => Promise<void> }
  | null;

export function SecurityPage() {
  const { t, lang } = useI18n();
  const toast = useToast();
  const [st, setSt] = useState<MfaStatus | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [open, setOpen] = useState<Open>(null);
  const load = useCallback(
    () =>
      void mfa.status().then((s) => {
        setSt(s);
        setError(null);
      }, setError),
    [],
  );
  useEffect(load, [load]);
  const close = () => setOpen(null);
  const showCodes = (codes?: string[]) => {
    load();
    setOpen(codes ? { kind: 'codes', codes } : null);
  };
  const ask = (title: string, text: string, submit: string, run: (pw: string) => Promise<void>) => setOpen({ kind: 'password', title, text, submit, run });
  const passkeysOk = mfa.passkeysHere();

  return (
    <section className="security" aria-labelledby="security-title">
      <h1 id="security-title">{t('security.title')}</h1>
      {error ? (
        <p className="error" role="alert">
          {errorText(error, t)}
        </p>
      ) : null}
      {st && (
        <>
          <p className="hint" data-testid="mfa-state">
            {t(st.enabled ? 'security.on' : 'security.off')}
          </p>

          <section className="card" aria-labelledby="sec-totp">
            <h2 id="sec-totp">{t('security.totp')}</h2>
            <p>{st.totp.enabled ? t('security.totp.on', { date: formatDate(st.totp.confirmed_at, lang) }) : t('security.totp.off')}</p>
            <div className="actions">
              <button type="button" className={st.totp.enabled ? '' : 'primary'} onClick={() => setOpen({ kind: 'totp' })}>
                {t(st.totp.enabled ? 'security.totp.again' : 'security.totp.setup')}
              </button>
              {st.totp.enabled && (
                <button
                  type="button"
                  className="danger"
                  onClick={() =>
                    ask(t('security.totp.remove'), t('security.totp.remove_text'), t('common.remove'), async (pw) => {
                      await mfa.totpRemove(pw);
                      toast.info(t('security.removed'));
                      close();
                      load();
                    })
                  }
                >
                  {t('security.totp.remove')}
                </button>
              )}
            </div>
          </section>

          <section className="card" aria-labelledby="sec-codes">
            <h2 id="sec-codes">{t('security.codes')}</h2>
            <p data-testid="codes-left">{st.enabled ? t('security.codes.left', { n: st.recovery_codes.remaining }) : t('security.codes.none')}</p>
            <div className="actions">
              <button
                type="button"
                disabled={!st.enabled}
                onClick={() =>
                  ask(t('security.codes.new'), t('security.codes.new_text'), t('security.codes.new'), async (pw) => {
                    showCodes((await mfa.regenerateCodes(pw)).recovery_codes);
                  })
                }
              >
                {t('security.codes.new')}
              </button>
            </div>
          </section>

          <section className="card" aria-labelledby="sec-passkeys">
            <h2 id="sec-passkeys">{t('security.passkeys')}</h2>
            {st.passkeys.length === 0 ? (
              <p>{t('security.passkeys.none')}</p>
            ) : (
              <div className="table-wrap">
                <table className="table">
                  <thead>
                    <tr>
                      <th scope="col">{t('security.passkey.name')}</th>
                      <th scope="col">{t('security.passkey.created')}</th>
                      <th scope="col">{t('security.passkey.used')}</th>
                      <th scope="col">
                        <span className="sr-only">{t('files.actions', { name: '' })}</span>
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {st.passkeys.map((p) => (
                      <tr key={p.id}>
                        <td>
                          {p.name}
                          {p.rp_id !== st.rp_id && <span className="hint"> {t('security.passkey.elsewhere', { host: p.rp_id })}</span>}
                        </td>
                        <td>{formatDate(p.created_at, lang)}</td>
                        <td>{p.last_used_at ? formatDate(p.last_used_at, lang) : t('common.never')}</td>
                        <td>
                          <button
                            type="button"
                            className="small danger"
                            aria-label={t('security.passkey.remove', { name: p.name })}
                            onClick={() =>
                              ask(t('security.passkey.remove', { name: p.name }), t('security.passkey.remove_text'), t('common.remove'), async (pw) => {
                                await mfa.passkeyRemove(p.id, pw);
                                toast.info(t('security.removed'));
                                close();
                                load();
                              })
                            }
                          >
                            {t('common.remove')}
                          </button>
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
            {!passkeysOk && <p className="hint">{t('mfa.passkey_not_here')}</p>}
            <div className="actions">
              <button type="button" disabled={!passkeysOk} onClick={() => setOpen({ kind: 'passkey' })}>
                {t('security.passkey.add')}
              </button>
            </div>
          </section>
        </>
      )}
      {open?.kind === 'totp' && (
        <TotpDialog
          onCodes={showCodes}
          onClose={() => {
            close();
            load();
          }}
        />
      )}
      {open?.kind === 'passkey' && (
        <PasskeyDialog
          onAdded={(codes) => {
            toast.info(t('security.passkey.added'));
            showCodes(codes);
          }}
          onClose={close}
        />
      )}
      {open?.kind === 'codes' && <CodesDialog codes={open.codes} onClose={close} />}
      {open?.kind === 'password' && <PasswordDialog title={open.title} text={open.text} submitLabel={open.submit} onSubmit={open.run} onClose={close} />}
    </section>
  );
}
