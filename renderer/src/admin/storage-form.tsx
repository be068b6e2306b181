/** Add or edit a storage: fields generated from the driver's descriptor, Test before Save. */
import { useState } from 'react';
import type { AdminStorage, DriverDescriptor } from '../api/types';
import { useI18n } from '../i18n';
import { Dialog } from '../ui/dialog';
import { errorText } from '../ui/toast';
import { initialValues, missingRequired, toConfig, type FormValues } from './driver-form';
import { DriverFields } from './driver-fields';
import { useSubmit } from '../ui/use-submit';
import { saveStorage, testStorage } from './admin-api';

interface Props {
  descriptors: DriverDescriptor[];
  storage: AdminStorage | null;
  onSaved: () => void;
  onClose: () => void;
}

export function StorageForm({ descriptors, storage, onSaved, onClose }: Props) {
  const { t } = useI18n();
  const [driver, setDriver] = useState(storage?.driver ?? descriptors[0]?.driver ?? '');
  const d = descriptors.find((x) => x.driver === driver);
  const [values, setValues] = useState<FormValues>(() => (d ? initialValues(d, storage?.config) : {}));
  const [common, setCommon] = useState({
    name: storage?.name ?? '',
    read_only: !!(storage?.read_only ?? storage?.readonly),
    enabled: storage?.enabled ?? true,
    // A new storage starts closed (issue 39): the admin alone until Access opens it.
    rbac_enabled: storage ? !!storage.rbac_enabled : true,
    ocr: !!storage?.ocr,
    sync_interval_s: String(storage?.sync_interval_s ?? 900),
    // Empty on a new storage: the server picks (watching for drivers that can, else polling).
    sync_mode: storage?.sync_mode ?? '',
  });
  const [result, setResult] = useState<{ ok: boolean; text: string } | null>(null);
  const [testing, setTesting] = useState(false);

  const pickDriver = (name: string) => {
    setDriver(name);
    const nd = descriptors.find((x) => x.driver === name);
    setValues(nd ? initialValues(nd) : {});
    setResult(null);
  };
  const body = () => ({
    name: common.name.trim(),
    driver,
    config: d ? toConfig(d, values) : {},
    read_only: common.read_only || d?.capabilities?.write === false,
    enabled: common.enabled,
    rbac_enabled: common.rbac_enabled,
    ocr: common.ocr,
    sync_interval_s: Number(common.sync_interval_s),
    ...(common.sync_mode ? { sync_mode: common.sync_mode } : {}),
  });

  const test = async () => {
    setTesting(true);
    setResult(null);
    try {
      const r = await testStorage(storage?.id ?? null, body());
      setResult(
        r.ok ? { ok: true, text: t('storage.test_ok', { n: r.object_count ?? 0 }) } : { ok: false, text: t('storage.test_fail', { error: r.error ?? '' }) },
      );
    } catch (e) {
      setResult({ ok: false, text: errorText(e, t) });
    } finally {
      setTesting(false);
    }
  };

  const { submit, busy, error } = useSubmit(async () => {
    if (d && missingRequired(d, values).length) return;
    await saveStorage(storage?.id ?? null, body());
    onSaved();
    onClose();
  });

  return (
    <Dialog title={storage ? t('storage.edit', { name: storage.name }) : t('storage.add')} onClose={onClose} wide>
      <form className="form two-col" onSubmit={submit}>
        <label>
          {t('storage.name')} *<input required value={common.name} onChange={(e) => setCommon({ ...common, name: e.target.value })} />
        </label>
        <label>
          {t('storage.driver')}
          <select value={driver} onChange={(e) => pickDriver(e.target.value)} disabled={!!storage}>
            {descriptors.map((x) => (
              <option key={x.driver} value={x.driver}>
                {x.label || x.driver}
              </option>
            ))}
          </select>
        </label>
        <DriverFields descriptor={d} values={values} onChange={setValues} editing={!!storage} />
        <label>
          {t('storage.sync_mode')}
          <select
            value={common.sync_mode || (d?.capabilities?.watch ? 'fsnotify' : 'poll')}
            onChange={(e) => setCommon({ ...common, sync_mode: e.target.value })}
          >
            {(d?.capabilities?.watch ? ['fsnotify', 'poll', 'ondemand'] : ['poll', 'ondemand']).map((m) => (
              <option key={m} value={m}>
                {t(`storage.sync_mode.${m as 'fsnotify' | 'poll' | 'ondemand'}`)}
              </option>
            ))}
          </select>
        </label>
        <label>
          {t('storage.interval')}
          <input type="number" min={5} value={common.sync_interval_s} onChange={(e) => setCommon({ ...common, sync_interval_s: e.target.value })} />
        </label>
        <label className="check">
          {/* A driver that cannot write (a plugin's `write: false`) makes every storage of it read-only. */}
          <input
            type="checkbox"
            checked={common.read_only || d?.capabilities?.write === false}
            disabled={d?.capabilities?.write === false}
            onChange={(e) => setCommon({ ...common, read_only: e.target.checked })}
          />
          {t('storage.readonly')}
        </label>
        <label className="check">
          <input type="checkbox" checked={common.enabled} onChange={(e) => setCommon({ ...common, enabled: e.target.checked })} />
          {t('storage.enabled')}
        </label>
        <label className="check">
          <input type="checkbox" checked={common.rbac_enabled} onChange={(e) => setCommon({ ...common, rbac_enabled: e.target.checked })} />
          {t('storage.rbac')}
        </label>
        <label className="check">
          <input type="checkbox" checked={common.ocr} onChange={(e) => setCommon({ ...common, ocr: e.target.checked })} />
          {t('storage.ocr')}
        </label>
        <div className="full" aria-live="polite">
          {result && (
            <p className={result.ok ? 'ok' : 'error'} data-testid="test-result">
              {result.text}
            </p>
          )}
          {error && (
            <p className="error" role="alert">
              {error}
            </p>
          )}
        </div>
        <div className="actions full">
          <button type="button" onClick={() => void test()} disabled={busy || testing}>
            {t('storage.test')}
          </button>
          <button type="button" onClick={onClose}>
            {t('common.cancel')}
          </button>
          <button type="submit" className="primary" disabled={busy || testing}>
            {t('common.save')}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
