/**
 * Admin → Apps → Store (docs/app-store.md "Web UI"): every enabled store's
 * entries with a search box, a kind filter, "only updates" and pages; each
 * entry with its description in the UI language, the version that runs here,
 * the installed one and an "Update available" badge; details with the
 * permissions it asks for and its versions; Install, Upgrade (an upgrade that
 * adds permissions asks the admin to approve them first), Uninstall, and
 * "Update automatically" on an installed app or language pack. A language pack
 * speaks of itself as a language (install, remove) and shows how much of the
 * interface it translates.
 * Refusals are sentences from their `details.reason`.
 */
import { useEffect, useState } from 'react';
import { ApiError } from '../api/client';
import { forgetCapabilities } from '../api/capabilities';
import { forgetActions } from '../apps/apps-api';
import { useI18n } from '../i18n';
import { formatBytes } from '../lib/format';
import { Dialog } from '../ui/dialog';
import { ConfirmDialog } from '../ui/forms';
import { useToast } from '../ui/toast';
import { AutoUpdateToggle } from './store-auto-update';
import { CATEGORIES, storeApi, type Catalogue, type CatalogueEntry, type StoreCategory, type StoreKind } from './store-api';
import { onStoreNotice, storeChanged } from './store-updates';
import { describeIn, lastErrorText, pageOf, storeRefusalText } from './store-words';
import { StoreLicence } from './store-licence';

const PAGE = 20;
/** The words a language pack says its own way (`store.lang.*` beside `store.cat.*`). */
type PackWord =
  | 'install'
  | 'install_of'
  | 'installed_ok'
  | 'upgrade_of'
  | 'upgraded_ok'
  | 'uninstall'
  | 'uninstall_of'
  | 'uninstall_confirm'
  | 'uninstalled_ok';
const KINDS: StoreKind[] = ['app', 'language-pack', 'storage'];

export function StoreCatalogue() {
  const { t } = useI18n();
  const [q, setQ] = useState('');
  const [kind, setKind] = useState<StoreKind | ''>('');
  const [category, setCategory] = useState<StoreCategory | ''>('');
  const [updates, setUpdates] = useState(false);
  const [offset, setOffset] = useState(0);
  const [cat, setCat] = useState<Catalogue | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    // A typed search waits for a pause; every other change loads at once.
    const timer = setTimeout(
      () =>
        void storeApi.catalogue({ q: q.trim() || undefined, kind: kind || undefined, category: category || undefined, updates, limit: PAGE, offset }).then(
          (c) => live && (setCat(c), setError(null)),
          (e) => live && setError(e),
        ),
      q ? 250 : 0,
    );
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [q, kind, category, updates, offset, tick]);
  // The bell rang for an update: the entries on screen show its badge without a reload.
  useEffect(() => onStoreNotice(() => setTick((n) => n + 1)), []);
  const [auto, setAuto] = useState<ReadonlySet<string>>(new Set());
  useEffect(() => {
    let live = true;
    // Without it the toggles read off; the catalogue above says why the store cannot be read.
    storeApi.autoUpdates().then(
      (ids) => live && setAuto(new Set(ids)),
      () => {},
    );
    return () => {
      live = false;
    };
  }, [tick]);
  const reload = () => {
    setTick((n) => n + 1);
    storeChanged();
    forgetActions();
    forgetCapabilities();
  };
  const page = pageOf(offset, PAGE, cat?.total ?? 0);
  return (
    <div className="settings" data-testid="admin-store">
      <section className="card" aria-label={t('store.cat.title')}>
        <h2>{t('store.cat.title')}</h2>
        <div className="store-filters">
          <label>
            {t('store.cat.search')}
            <input
              type="search"
              value={q}
              onChange={(e) => {
                setQ(e.target.value);
                setOffset(0);
              }}
            />
          </label>
          <label>
            {t('store.cat.kind')}
            <select
              value={kind}
              onChange={(e) => {
                setKind(e.target.value as StoreKind | '');
                setOffset(0);
              }}
            >
              <option value="">{t('store.cat.kind_all')}</option>
              {KINDS.map((k) => (
                <option key={k} value={k}>
                  {t(`store.cat.kind_${k}`)}
                </option>
              ))}
            </select>
          </label>
          <label>
            {t('store.cat.category')}
            <select
              value={category}
              onChange={(e) => {
                setCategory(e.target.value as StoreCategory | '');
                setOffset(0);
              }}
            >
              <option value="">{t('store.cat.category_all')}</option>
              {CATEGORIES.map((c) => (
                <option key={c} value={c}>
                  {t(`store.cat.cat_${c}`)}
                </option>
              ))}
            </select>
          </label>
          <label className="check">
            <input
              type="checkbox"
              checked={updates}
              onChange={(e) => {
                setUpdates(e.target.checked);
                setOffset(0);
              }}
            />{' '}
            {t('store.cat.updates_only')}
          </label>
        </div>
        {error ? (
          <p className="error" role="alert">
            {storeRefusalText(error, t)}
          </p>
        ) : null}
        {cat === null && !error && <p className="muted">{t('common.loading')}</p>}
        {cat?.stores.length === 0 && <p className="muted">{t('store.cat.no_stores')}</p>}
        {cat?.stores
          .filter((s) => s.error)
          .map((s) => (
            <p key={s.id} className="error" data-testid="store-failed">
              {t('store.cat.store_failed', {
                name: s.name ?? s.url,
                reason: storeRefusalText({ code: s.error!.error, details: s.error!.details, message: lastErrorText(s.last_error ?? s.error!.error, t) }, t),
              })}
            </p>
          ))}
        {cat && cat.stores.length > 0 && cat.total === 0 && <p className="muted">{t('store.cat.none')}</p>}
        <ul className="store-entries">
          {cat?.entries.map((e) => (
            <Entry key={`${e.store}/${e.id}`} entry={e} auto={auto.has(e.id)} onChanged={reload} />
          ))}
        </ul>
        {cat && cat.total > PAGE && (
          <nav className="actions pager" aria-label={t('store.cat.title')}>
            <button type="button" disabled={page.prev === null} onClick={() => setOffset(page.prev ?? 0)}>
              {t('store.cat.prev')}
            </button>
            <span aria-live="polite">{t('store.cat.count', { from: page.from, to: page.to, total: cat.total })}</span>
            <button type="button" disabled={page.next === null} onClick={() => setOffset(page.next ?? offset)}>
              {t('store.cat.next')}
            </button>
          </nav>
        )}
      </section>
    </div>
  );
}

function Entry({ entry: e, auto, onChanged }: { entry: CatalogueEntry; auto: boolean; onChanged: () => void }) {
  const { t, lang } = useI18n();
  const toast = useToast();
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  const [refusal, setRefusal] = useState<string | null>(null);
  const [asks, setAsks] = useState<string[] | null>(null);
  const [uninstall, setUninstall] = useState(false);
  /** An install's or upgrade's operation, 0..1, while it runs. */
  const [progress, setProgress] = useState<number | null>(null);
  const latest = e.latest;
  const pack = e.kind === 'language-pack';
  /** A language pack's own words where it has them ("Install language", "Remove language"). */
  const word = (key: PackWord): `store.lang.${PackWord}` | `store.cat.${PackWord}` => (pack ? `store.lang.${key}` : `store.cat.${key}`);
  const run = async (work: () => Promise<void>) => {
    setBusy(true);
    setRefusal(null);
    try {
      await work();
      onChanged();
    } catch (err) {
      setRefusal(storeRefusalText(err, t));
    } finally {
      setBusy(false);
      setProgress(null);
    }
  };
  const upgrade = (approve: boolean) =>
    run(async () => {
      try {
        const a = await storeApi.upgrade(e, approve, setProgress);
        toast.info(t(word('upgraded_ok'), { name: a.name, version: a.version }));
      } catch (err) {
        // The server names the permissions the upgrade adds; the admin approves them, then it is sent again.
        if (!approve && err instanceof ApiError && err.details.reason === 'permission_not_approved') {
          const p = err.details.permissions;
          setAsks(Array.isArray(p) ? p.map(String) : []);
          return;
        }
        throw err;
      }
    });
  const install = () =>
    run(async () => {
      const a = await storeApi.install(e, setProgress);
      toast.info(t(word('installed_ok'), { name: a.name, version: a.version }));
    });
  const detailsId = `store-entry-${e.store}-${e.id}`;
  return (
    <li className="card store-entry" aria-label={e.name} data-testid={`entry-${e.id}`}>
      <div className="store-entry-head">
        {e.icon && <img className="store-icon" src={e.icon} alt="" width={32} height={32} />}
        <h3>{e.name}</h3>
        <span className="chip small">{t(`store.cat.one_${e.kind}`)}</span>
        {e.license.model === 'paid' && <span className="chip small">{t('store.cat.paid')}</span>}
        {e.update_available && (
          <span className="badge" data-testid="update-badge">
            {t('store.cat.update')}
          </span>
        )}
      </div>
      <p>{describeIn(e.description, lang)}</p>
      {pack && (
        <p data-testid="language-facts">
          {t('store.lang.language', { name: e.name })}
          {latest?.completeness !== undefined && ` · ${t('store.lang.completeness', { percent: latest.completeness })}`}
        </p>
      )}
      {e.categories.length > 0 && (
        <ul className="chips" aria-label={t('store.cat.categories_of', { name: e.name })}>
          {e.categories.map((c) => (
            <li key={c} className="chip small">
              {t(`store.cat.cat_${c}`)}
            </li>
          ))}
        </ul>
      )}
      <p className="muted">
        {latest ? t('store.cat.version', { version: latest.version }) : t('store.cat.incompatible')}
        {e.installed_version && (
          <>
            {' · '}
            <span data-testid="installed-version">{t('store.cat.installed', { version: e.installed_version })}</span>
          </>
        )}
        {latest && ` · ${t('store.cat.compatible')}`}
        {` · ${t('store.cat.publisher', { publisher: e.publisher })}`}
      </p>
      {refusal && (
        <p className="error" role="alert">
          {refusal}
        </p>
      )}
      {progress !== null && (
        <p className="muted" data-testid="install-progress">
          <progress max={1} value={progress} aria-label={t('store.cat.progress_of', { name: e.name })} /> {Math.round(progress * 100)} %
        </p>
      )}
      {e.kind === 'app' && e.license.model === 'paid' && e.installed_version && <StoreLicence entry={e} />}
      <div className="actions">
        <button
          type="button"
          aria-expanded={open}
          aria-controls={detailsId}
          aria-label={t('store.cat.details_of', { name: e.name })}
          onClick={() => setOpen((o) => !o)}
        >
          {t('store.cat.details')}
        </button>
        {!e.installed_version && latest && (
          <button type="button" className="primary" disabled={busy} aria-label={t(word('install_of'), { name: e.name })} onClick={() => void install()}>
            {busy ? t('store.cat.working') : t(word('install'))}
          </button>
        )}
        {e.update_available && latest && (
          <button
            type="button"
            className="primary"
            disabled={busy}
            aria-label={t(word('upgrade_of'), { name: e.name, version: latest.version })}
            onClick={() => void upgrade(false)}
          >
            {busy ? t('store.cat.working') : t('store.cat.upgrade')}
          </button>
        )}
        {e.installed_version && (
          <button type="button" className="danger" disabled={busy} aria-label={t(word('uninstall_of'), { name: e.name })} onClick={() => setUninstall(true)}>
            {t(word('uninstall'))}
          </button>
        )}
      </div>
      {(e.kind === 'app' || pack) && e.installed_version && (
        <AutoUpdateToggle name={e.name} on={auto} busy={busy} onChange={(on) => void run(() => storeApi.setAutoUpdate(e.id, on).then(() => {}))} />
      )}
      {open && (
        <div id={detailsId} className="store-details">
          {e.screenshots.length > 0 && (
            <div className="store-screenshots">
              {e.screenshots.map((s) => (
                <figure key={s.url}>
                  <img src={s.url} alt={describeIn(s.caption, lang)} loading="lazy" />
                  <figcaption>{describeIn(s.caption, lang)}</figcaption>
                </figure>
              ))}
            </div>
          )}
          <h4>{t('store.cat.permissions')}</h4>
          {latest?.permissions.length ? (
            <ul className="chips">
              {latest.permissions.map((p) => (
                <li key={p} className="chip">
                  <code>{p}</code>
                </li>
              ))}
            </ul>
          ) : (
            <p className="muted">{t('store.cat.permissions_none')}</p>
          )}
          {latest && (
            <p className="muted">
              {t('store.cat.size')}: {formatBytes(latest.size)}
            </p>
          )}
          <h4>{t('store.cat.versions')}</h4>
          <ul>
            {e.versions.map((v) => (
              <li key={v.version}>{v.compatible ? v.version : t('store.cat.version_incompatible', { version: v.version, range: v.filedock_range })}</li>
            ))}
          </ul>
        </div>
      )}
      {asks && latest && (
        <Dialog title={t('store.cat.approve_title')} onClose={() => setAsks(null)}>
          <p>{t('store.cat.approve_text', { name: e.name, version: latest.version })}</p>
          <ul className="chips" data-testid="new-permissions">
            {asks.map((p) => (
              <li key={p} className="chip">
                <code>{p}</code>
              </li>
            ))}
          </ul>
          <div className="actions">
            <button type="button" data-autofocus onClick={() => setAsks(null)}>
              {t('common.cancel')}
            </button>
            <button
              type="button"
              className="primary"
              onClick={() => {
                setAsks(null);
                void upgrade(true);
              }}
            >
              {t('store.cat.approve')}
            </button>
          </div>
        </Dialog>
      )}
      {uninstall && (
        <ConfirmDialog
          title={t(word('uninstall_of'), { name: e.name })}
          text={t(word('uninstall_confirm'), { name: e.name })}
          confirmLabel={t(word('uninstall'))}
          danger
          onClose={() => setUninstall(false)}
          onConfirm={() =>
            void run(async () => {
              await storeApi.uninstall(e.id);
              toast.info(t(word('uninstalled_ok'), { name: e.name }));
            })
          }
        />
      )}
    </li>
  );
}
