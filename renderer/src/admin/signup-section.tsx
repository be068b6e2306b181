/** Sign-in settings: whether anyone may create a `user` account from the sign-in page (off by default). */
import type { ChangeEvent } from 'react';
import { useI18n } from '../i18n';
import { useToast } from '../ui/toast';
import * as admin from './admin-api';
import { Section, useSection } from './section';

export function SignupSection() {
  const { t } = useI18n();
  const toast = useToast();
  const [s, error, missing, setS] = useSection(admin.authSettings);
  const toggle = async (e: ChangeEvent<HTMLInputElement>) => {
    const allow = e.target.checked;
    // The box follows the click at once and goes back if the server refuses.
    setS({ allow_signup: allow });
    try {
      setS(await admin.patchAuthSettings({ allow_signup: allow }));
      toast.info(t('settings.saved'));
    } catch (err) {
      setS({ allow_signup: !allow });
      toast.error(err);
    }
  };
  return (
    <Section title={t('signup.settings')} missing={missing} error={error}>
      {s && (
        <>
          <label className="check">
            <input type="checkbox" checked={s.allow_signup} onChange={(e) => void toggle(e)} />
            {t('signup.allow')}
          </label>
          <p className="hint">{t('signup.allow_hint')}</p>
        </>
      )}
    </Section>
  );
}
