/** The options shared by download links and file requests: expiry, PIN, cap, comment. */
import { useI18n } from '../i18n';
import type { ShareInput } from './share-api';

export interface LinkOptionsState {
  ttl: string;
  pinMode: 'none' | 'custom' | 'generated';
  pin: string;
  max: string;
  comment: string;
}

export const defaultOptions: LinkOptionsState = { ttl: '168h', pinMode: 'none', pin: '', max: '', comment: '' };

const TTLS = [
  ['1h', 'share.expiry.1h'],
  ['24h', 'share.expiry.1d'],
  ['168h', 'share.expiry.7d'],
  ['720h', 'share.expiry.30d'],
  ['', 'share.expiry.never'],
] as const;

/** The request fields of the chosen options (an empty TTL asks for no expiry; the server may clamp it). */
export function optionsToInput(o: LinkOptionsState): ShareInput {
  return {
    ...(o.ttl ? { ttl: o.ttl } : {}),
    ...(o.pinMode === 'custom' ? { pin: o.pin } : o.pinMode === 'generated' ? { password: true } : {}),
    ...(o.max ? { max_downloads: Number(o.max) } : {}),
    ...(o.comment.trim() ? { comment: o.comment.trim() } : {}),
  };
}

export function LinkOptions({ value: o, onChange, downloads }: { value: LinkOptionsState; onChange: (o: LinkOptionsState) => void; downloads?: boolean }) {
  const { t } = useI18n();
  const set = (patch: Partial<LinkOptionsState>) => onChange({ ...o, ...patch });
  return (
    <>
      <label>
        {t('share.expiry')}
        <select value={o.ttl} onChange={(e) => set({ ttl: e.target.value })}>
          {TTLS.map(([v, k]) => (
            <option key={v} value={v}>
              {t(k)}
            </option>
          ))}
        </select>
      </label>
      <fieldset className="radios">
        <legend>{t('share.pin')}</legend>
        {(['none', 'custom', 'generated'] as const).map((m) => (
          <label key={m} className="check">
            <input type="radio" name="pin-mode" checked={o.pinMode === m} onChange={() => set({ pinMode: m })} />
            {t(`share.pin.${m}`)}
          </label>
        ))}
      </fieldset>
      {o.pinMode === 'custom' && (
        <label>
          {t('share.pin.value')}
          <input inputMode="numeric" autoComplete="off" required minLength={4} maxLength={32} value={o.pin} onChange={(e) => set({ pin: e.target.value })} />
        </label>
      )}
      {downloads && (
        <label>
          {t('share.max_downloads')}
          <input type="number" min={1} value={o.max} onChange={(e) => set({ max: e.target.value })} />
        </label>
      )}
      <label>
        {t('share.comment')}
        <input value={o.comment} maxLength={500} onChange={(e) => set({ comment: e.target.value })} />
      </label>
    </>
  );
}
