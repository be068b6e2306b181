/**
 * Admin → Replication (docs/replication.md): status with the recovery point,
 * targets and storage links, ordered rules, the failure log, the report and
 * the settings. Status and failures refresh every few seconds while open.
 */
import { useEffect, useState } from 'react';
import type { AdminStorage, DriverDescriptor } from '../api/types';
import type { ReplicaMode, ReplicaRule, ReplicaStatus, ReplicaTarget } from '../../../server/contract';
import { useI18n } from '../i18n';
import { errorText } from '../ui/toast';
import * as admin from './admin-api';
import { FailuresCard } from './replication-failures';
import { RulesCard } from './replication-rules';
import { ReportCard, SettingsCard, StatusCard } from './replication-status';
import { TargetsCard } from './replication-targets';

const POLL_MS = 5000;

export function ReplicationTab() {
  const { t } = useI18n();
  const [targets, setTargets] = useState<ReplicaTarget[] | null>(null);
  const [storages, setStorages] = useState<AdminStorage[]>([]);
  const [descs, setDescs] = useState<DriverDescriptor[]>([]);
  const [rules, setRules] = useState<{ rules: ReplicaRule[]; modes: ReplicaMode[] }>({ rules: [], modes: [] });
  const [status, setStatus] = useState<ReplicaStatus | null>(null);
  const [tick, setTick] = useState(0);
  const [error, setError] = useState<unknown>(null);
  const refresh = () => setTick((n) => n + 1);
  // A target or link change changes the status too ("No backups set up" or not): read it again at once.
  const loadTargets = () =>
    void Promise.all([admin.replicaTargets(), admin.storages()]).then(([tg, st]) => {
      setTargets(tg);
      setStorages(st);
      refresh();
    }, setError);
  const loadRules = () => admin.replicaRules().then(setRules, setError);
  useEffect(() => {
    loadTargets();
    void loadRules();
    admin.drivers().then(setDescs, setError);
    const timer = setInterval(refresh, POLL_MS);
    return () => clearInterval(timer);
  }, []);
  useEffect(() => void admin.replicaStatus().then(setStatus, setError), [tick]);

  if (error)
    return (
      <p className="error" role="alert">
        {errorText(error, t)}
      </p>
    );
  if (!targets) return <p className="muted">{t('common.loading')}</p>;
  return (
    <div className="settings replication">
      <StatusCard status={status} tick={tick} hasTargets={targets.length > 0} />
      <TargetsCard targets={targets} storages={storages} descriptors={descs} reload={loadTargets} />
      <RulesCard rules={rules.rules} modes={rules.modes} reload={loadRules} />
      <FailuresCard tick={tick} onFixed={refresh} />
      <ReportCard />
      <SettingsCard modes={rules.modes} />
    </div>
  );
}
