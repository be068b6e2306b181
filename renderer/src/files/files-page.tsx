/**
 * The file manager screen: it owns the open folder, the selection, the dialogs
 * and the shortcuts, and wires the listing, uploads and realtime frames together.
 */
import { lazy, Suspense, useCallback, useEffect, useMemo, useRef, useState, type DragEvent, type KeyboardEvent, type MouseEvent } from 'react';
import type { Entry, Listing, SortDir, SortKey } from '../api/types';
import { ApiError } from '../api/client';
import { useI18n } from '../i18n';
import { navigate, usePathname } from '../lib/router';
import { baseName, joinPath, parentPath, routeOf, uiPathOfRoute, isInside } from '../lib/ui-path';
import { entryComparator } from '../lib/natural-sort';
import { useToast, errorText } from '../ui/toast';
import { uploads } from '../upload/uploads';
import { fromDrop, type Picked } from '../upload/drop';
import { UploadPanel } from '../upload/upload-panel';
import * as sel from './selection';
import { useListing } from './use-listing';
import { FileList, keyOf, rowId, type ViewMode } from './file-list';
import { Breadcrumb } from './breadcrumb';
import { ContextMenu, type MenuItem } from './context-menu';
import { canPreview } from './preview';
import { useBackToRow } from './back-to-row';
import { SearchBar } from './search-bar';
import { SearchChips } from './search-chips';
import { NO_FILTERS, recentSearches, rememberSearch, toQuery, without, type Filters } from './search-filters';
import { ActionsBar } from './files-toolbar';
import { FilesDialogs, type DialogState } from './files-dialogs';
import { Sidebar } from './sidebar';
import { OpsPanel } from './ops-panel';
import { useFolderEvents } from './realtime';
import { upsertOp, setOps, showOpsPanel } from './ops-store';
import { isTextName } from './highlight';
import * as files from './file-api';
import { EmptyState } from './empty-state';
import { SelectionBar, type SelectionActions } from './selection-bar';
import { isCoarsePointer } from './long-press';
import { ToolIcon } from '../ui/tool-icons';
import { droppedPaths, startRowDrag } from './drag';
import { useSession } from '../auth/session';
import { saveSigned } from '../device/signed-src';
import { diagramEditorUrl, diagramRoute, isDiagramName } from './diagram/diagram-route';
import { useCapabilities } from '../api/capabilities';
import { editorRoute, officeOpenTarget } from '../office/office-files';
import { useAssistantButton } from '../assistant/use-assistant-button';
import { useAppActions, useHasAppActions } from '../apps/use-app-actions';
import { matchingRules, openView, runAction, type AppAction, type OpenRule } from '../apps/apps-api';
import { pickLabel } from '../apps/surface/logic';
import { AppViewFrame, type OpenView } from '../apps/app-view';
import { appRoute } from '../apps/app-route';
import { useVaultFolder } from '../vault/use-vault-folder';
import { linkable, membersItems, rootOf } from '../vault/members-menu';

const AssistantPanel = lazy(() => import('../assistant/assistant-panel'));

const pref = <T extends string>(k: string, d: T): T => (localStorage.getItem(`filedock.${k}`) as T | null) ?? d;

export function FilesPage() {
  const { t, lang } = useI18n();
  const toast = useToast();
  const path = uiPathOfRoute(usePathname());
  const [sort, setSort] = useState<SortKey>(() => pref('sort', 'name'));
  const [dir, setDir] = useState<SortDir>(() => pref('dir', 'asc'));
  const [view, setView] = useState<ViewMode>(() => pref('view', 'list'));
  const listing = useListing(path, sort, dir);
  const vf = useVaultFolder(path, listing.entries, sort, dir, listing.storage);
  /** The search shown (`folder`: where it was made from, which a scoped search keeps). */
  const [search, setSearch] = useState<{ q: string; folder: string; result: Listing | null; error: unknown } | null>(null);
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const [recent, setRecent] = useState<string[]>(() => recentSearches());
  const [selection, setSelection] = useState<sel.Selection>(sel.emptySelection);
  const [dialog, setDialog] = useState<DialogState>(null);
  const [menu, setMenu] = useState<{ x: number; y: number; more?: boolean; apps?: boolean } | null>(null);
  const [appView, setAppView] = useState<OpenView | null>(null);
  const [clip, setClip] = useState<{ verb: 'copy' | 'move'; paths: string[] } | null>(null);
  const [dragging, setDragging] = useState(false);
  const [searchOpen, setSearchOpen] = useState(false);
  const [quotaTick, setQuotaTick] = useState(0);
  const caps = useCapabilities();
  // Plain text has its own button; the rest of the server's new-document types go to "New document…".
  // Only kinds that need an editor: plain text and Markdown are "New text file" (a typed extension is kept).
  const docTypes = (caps?.newdoc_types ?? []).filter((x) => x.requires);
  const searchInput = useRef<HTMLInputElement>(null);
  const uploadInput = useRef<HTMLInputElement>(null);
  const listRef = useRef<HTMLDivElement>(null);
  const assistantBtn = useRef<HTMLButtonElement>(null);
  const [assistantOpen, setAssistantOpen] = useState(false);

  const entries = useMemo(() => (search ? [...(search.result?.entries ?? [])].sort(entryComparator(sort, dir)) : vf.entries), [search, vf.entries, sort, dir]);
  const total = search || vf.own ? entries.length : Math.max(listing.total, entries.length);
  const keys = useMemo(() => entries.map(keyOf), [entries]);
  const byKey = useMemo(() => new Map(entries.map((e) => [keyOf(e), e])), [entries]);
  const pathOf = useCallback((e: Entry) => e.path ?? joinPath(path, e.name), [path]);
  // A paired device's key may lack the write or share verb: its buttons follow what the key may do.
  const session = useSession();
  const assistant = useAssistantButton(session.user.role === 'admin');
  const verbs = session.user.key?.verbs;
  const canShare = !verbs || verbs.includes('shares:write');
  const keyWrites = !verbs || verbs.includes('files:write');
  const readOnly = path === '/' || !!listing.storage?.readonly || !keyWrites;
  const chosen = sel
    .ordered(selection, keys)
    .map((k) => byKey.get(k)!)
    .filter(Boolean);

  useEffect(() => setSelection((s) => sel.prune(s, keys)), [keys]);
  useEffect(() => {
    setSelection(sel.emptySelection);
    setSearch(null);
  }, [path]);

  // Realtime: a delete is applied at once, other changes re-read the folder (batched).
  const reloadTimer = useRef<ReturnType<typeof setTimeout>>(undefined);
  const softReload = useCallback(() => {
    clearTimeout(reloadTimer.current);
    reloadTimer.current = setTimeout(() => listing.reload(true), 300);
  }, [listing]);
  useFolderEvents(path, {
    onChange: (c) => {
      if (c.kind === 'deleted') listing.removeNames([c.name]);
      else softReload();
      setQuotaTick((n) => n + 1);
    },
    onOp: upsertOp,
    onReconnect: softReload,
  });
  useEffect(() => {
    uploads.setOnDone((p) => {
      if (parentPath(p) === path || isInside(p, path)) softReload();
      setQuotaTick((n) => n + 1);
    });
    return () => uploads.setOnDone(null);
  }, [path, softReload]);

  const open = (e: Entry, plain = false) => {
    const p = pathOf(e);
    if (e.type === 'dir') navigate(routeOf(p));
    // Diagram files open in the configured diagram editor; without one, like any other file.
    else if (!plain && isDiagramName(e.name))
      void diagramEditorUrl().then(
        (u) => (u ? navigate(diagramRoute(p)) : open(e, true)),
        () => open(e, true),
      );
    else if (officeOpenTarget(e, caps) === 'editor') navigate(editorRoute(p));
    // A preview, or the info panel for a file that has none (never a silent download).
    else setDialog({ kind: 'preview', path: p, entry: e });
  };

  // In an encrypted folder the bytes are decrypted here before they are saved.
  const download = (e: Entry) => void (vf.folder ? vf.download(e) : saveSigned(files.rawUrl(pathOf(e), false), e.name)).catch(toast.error);

  /** One file downloads as itself; a folder or several items as one ZIP (a plain browser download, streamed by the server). */
  const downloadChosen = (items: Entry[]) => {
    if (items.length === 1 && items[0].type === 'file') return download(items[0]);
    if (vf.folder) return items.filter((e) => e.type === 'file').forEach(download);
    void saveSigned(files.zipUrl(items.map(pathOf)), '').catch(toast.error);
  };

  const refresh = async () => {
    try {
      if (path !== '/') await files.refreshFolder(path);
      listing.reload(true);
      setQuotaTick((n) => n + 1);
    } catch (e) {
      toast.error(e);
    }
  };

  const afterWrite = () => {
    softReload();
    setQuotaTick((n) => n + 1);
  };

  const doDelete = async (paths: string[]) => {
    try {
      const r = await files.remove(paths);
      const gone = new Set(r.deleted);
      listing.removeNames(entries.filter((e) => gone.has(pathOf(e))).map((e) => baseName(pathOf(e))));
      // Storages without a trash delete for good; the answer names those paths afterwards.
      const permanent = r.permanent ?? [];
      if (permanent.length) toast.info(t('files.deleted_permanent', { names: permanent.map(baseName).join(', ') }));
      else if (r.deleted.length) toast.info(t('files.trashed'));
      if (r.failed.length) toast.error(new Error(t('files.delete_failed', { n: r.failed.length, first: r.failed[0].error })));
      afterWrite();
    } catch (e) {
      toast.error(e);
    }
  };

  const doTransfer = async (verb: 'copy' | 'move', paths: string[], dest: string) => {
    let queued = false;
    let moved = 0;
    for (const p of paths) {
      if (isInside(dest, p) || parentPath(p) === dest) continue;
      try {
        const r = await files.transfer(verb, p, dest);
        if (r?.operation_id) queued = true;
        moved++;
        if (verb === 'move' && !search) listing.removeNames([baseName(p)]);
      } catch (e) {
        toast.error(e);
        return afterWrite();
      }
    }
    if (queued) {
      toast.info(t('files.copy_queued'));
      files.listOps().then(
        (r) => setOps(r.ops ?? []),
        () => {},
      );
    } else if (moved) toast.info(verb === 'copy' ? t('files.copied') : t('files.moved_to', { path: dest }));
    afterWrite();
  };

  /** Rows dragged onto a folder (a row, or a branch of the tree) move there. */
  const dropInto = (dest: string, ev: DragEvent) => {
    const dragged = droppedPaths(ev.dataTransfer);
    if (dragged.length) void doTransfer('move', dragged, dest);
  };
  const onRowDragStart = (e: Entry, ev: DragEvent) => {
    const key = keyOf(e);
    // Dragging a selected row moves the whole selection; any other row moves alone.
    const dragged = selection.selected.has(key) ? chosen.map(pathOf) : [pathOf(e)];
    if (!selection.selected.has(key)) setSelection(sel.click(selection, keys, key));
    startRowDrag(ev.dataTransfer, dragged);
  };

  const startUpload = async (picked: Picked) => {
    if (await vf.encrypted()) return void vf.upload(picked).catch(toast.error);
    for (const d of picked.dirs) {
      try {
        await files.mkdir(path, d);
      } catch (e) {
        // An existing folder is fine: the files go into it.
        if (!(e instanceof ApiError) || !['name_taken', 'conflict'].includes(e.code)) return toast.error(e);
      }
    }
    for (const f of picked.files) uploads.add(path, f.file, f.rel);
    if (picked.dirs.length) softReload();
  };

  const runSearch = async (text: string, f: Filters) => {
    const q = toQuery(text, f, path);
    setFilters(f);
    if (!vf.folder) setRecent(rememberSearch(q.q)); // decrypted names are never written down
    setSearch({ q: q.q, folder: path, result: null, error: null });
    setSelection(sel.emptySelection);
    try {
      setSearch({ q: q.q, folder: path, result: vf.folder ? vf.filter(text) : await files.search(q), error: null });
    } catch (error) {
      setSearch({ q: q.q, folder: path, result: null, error });
    }
  };

  const setSortKey = (k: SortKey) => setSortOrder(k, k === sort && dir === 'asc' ? 'desc' : 'asc');
  const setSortOrder = (k: SortKey, d: SortDir) => {
    setSort(k);
    setDir(d);
    localStorage.setItem('filedock.sort', k);
    localStorage.setItem('filedock.dir', d);
  };
  const setViewMode = (v: ViewMode) => {
    setView(v);
    localStorage.setItem('filedock.view', v);
  };

  const one = chosen.length === 1 ? chosen[0] : null;
  const paths = chosen.map(pathOf);

  // App actions for the selection (SPEC App plugins), each with its icon and label in the reader's language.
  const appsOn = !!caps?.app_plugins?.enabled && (path !== '/' || !!search);
  const appAnswer = useAppActions(paths, appsOn);
  const hasApps = useHasAppActions(appsOn);
  const runApp = async (a: AppAction, on: string[]) => {
    const label = pickLabel(a.label, lang);
    try {
      if (a.view && a.view_placement === 'page') return navigate(appRoute(a.plugin, a.view, on));
      const r = await runAction(a.plugin, a.id, on);
      if ('surface' in r)
        setAppView({ plugin: a.plugin, view: a.view ?? a.id, paths: on, surface: r.surface, placement: a.view_placement ?? 'dialog', title: label });
      else {
        toast.info(t('apps.started', { label }));
        files.listOps().then(
          (l) => setOps(l.ops ?? []),
          () => {},
        );
        showOpsPanel();
      }
    } catch (e) {
      toast.error(e);
    }
  };
  const startApp = (a: AppAction, on: string[]) => (a.confirm ? setDialog({ kind: 'app-confirm', action: a, paths: on }) : void runApp(a, on));
  const openWith = async (r: OpenRule, p: string) => {
    const found = r.action ? appAnswer?.actions.find((a) => a.plugin === r.plugin && a.id === r.action) : undefined;
    if (found) return startApp(found, [p]);
    if (!r.view) return;
    const row = appAnswer?.views.find((v) => v.plugin === r.plugin && v.id === r.view);
    if (row?.placement === 'page') return navigate(appRoute(r.plugin, r.view, [p]));
    try {
      const { surface } = await openView(r.plugin, r.view, p);
      setAppView({ plugin: r.plugin, view: r.view, paths: [p], surface, placement: row?.placement ?? 'dialog', title: pickLabel(r.label, lang) });
    } catch (e) {
      toast.error(e);
    }
  };
  const appItems: MenuItem[] = [
    ...(one?.type === 'file' ? matchingRules(appAnswer?.open_rules, one.name, one.mime) : []).map((r) => ({
      label: t('apps.open_with', { label: pickLabel(r.label, lang) }),
      onSelect: () => void openWith(r, pathOf(one!)),
    })),
    ...(appAnswer?.actions ?? []).map((a) => ({ label: pickLabel(a.label, lang) || a.id, icon: a.icon, danger: a.danger, onSelect: () => startApp(a, paths) })),
  ].map((it, i) => (i === 0 ? { ...it, separator: true } : it));
  const canWrite = (!readOnly || !!search) && keyWrites;
  // A file an app holds is read-only for everyone else (the server answers 423 `locked`): its changing items are off.
  const holdsLocked = chosen.some((e) => e.locked);
  const canLink = path !== '/' && canShare && linkable(one); // no links to encrypted folders
  const menuItems: MenuItem[] = chosen.length
    ? [
        ...(one ? [{ label: t('files.open'), onSelect: () => open(one), shortcut: 'Enter' }] : []),
        ...(one?.type === 'file' ? [{ label: t('files.download'), onSelect: () => download(one) }] : []),
        ...(path !== '/' || search ? (one?.type === 'file' ? [] : [{ label: t('files.download_zip'), onSelect: () => downloadChosen(chosen) }]) : []),
        ...(one?.type === 'file' ? [{ label: t('files.versions'), onSelect: () => setDialog({ kind: 'versions', path: pathOf(one), entry: one }) }] : []),
        ...(one?.type === 'file' && isTextName(one.name, one.mime) && canWrite && !one.locked && !vf.folder
          ? [{ label: t('files.edit'), onSelect: () => setDialog({ kind: 'edit', path: pathOf(one), entry: one }) }]
          : []),
        ...(one && canLink ? [{ label: t('files.share'), onSelect: () => setDialog({ kind: 'share', path: pathOf(one), entry: one }) }] : []),
        ...membersItems(t, rootOf(one), setDialog),
        ...(one?.type === 'dir' && canWrite && canLink
          ? [{ label: t('files.request'), onSelect: () => setDialog({ kind: 'request', path: pathOf(one), entry: one }) }]
          : []),
        ...(one
          ? [
              {
                label: t('files.rename'),
                onSelect: () => setDialog({ kind: 'rename', path: pathOf(one), entry: one }),
                disabled: !canWrite || holdsLocked,
                shortcut: 'F2',
              },
            ]
          : []),
        { label: t('files.move'), onSelect: () => setDialog({ kind: 'move', paths }), disabled: !canWrite || holdsLocked },
        { label: t('files.copy'), onSelect: () => setDialog({ kind: 'copy', paths }), disabled: path === '/' && !search },
        { label: t('files.delete'), onSelect: () => setDialog({ kind: 'delete', paths }), danger: true, disabled: !canWrite || holdsLocked, shortcut: 'Del' },
        ...appItems,
      ]
    : [
        { label: t('files.new_folder'), onSelect: () => setDialog({ kind: 'mkdir' }), disabled: readOnly },
        ...(vf.folder ? [] : [{ label: t('vault.new_folder'), onSelect: () => setDialog({ kind: 'vault-mkdir' }), disabled: readOnly }]),
        { label: t('files.new_text'), onSelect: () => setDialog({ kind: 'newtext' }), disabled: readOnly || !!vf.folder },
        ...(docTypes.length ? [{ label: t('newdoc.title'), onSelect: () => setDialog({ kind: 'newdoc' }), disabled: readOnly || !!vf.folder }] : []),
        ...(path !== '/' && canShare && !vf.folder
          ? [{ label: t('files.request'), onSelect: () => setDialog({ kind: 'request', path }), disabled: readOnly }]
          : []),
        ...membersItems(t, vf.folder?.path === path ? { id: vf.folder.id, name: baseName(path) } : null, setDialog),
        { label: t('files.refresh'), onSelect: () => void refresh() },
        { label: t('files.select_all'), onSelect: () => setSelection(sel.selectAll(keys, selection)), shortcut: 'Ctrl+A' },
      ];

  /** The folder's own actions, first in the phone's "More" menu (its toolbar shows only upload and this menu). */
  const folderExtras: MenuItem[] = [
    { label: t('files.upload'), onSelect: () => uploadInput.current?.click(), disabled: readOnly },
    view === 'list'
      ? { label: t('files.view.grid'), onSelect: () => setViewMode('grid') }
      : { label: t('files.view.list'), onSelect: () => setViewMode('list') },
  ];

  /** The selection's actions, for the wide toolbar and the phone's selection bar alike (absent when they do not apply). */
  const act: SelectionActions = {
    rename: one && canWrite && !holdsLocked ? () => setDialog({ kind: 'rename', path: pathOf(one), entry: one }) : undefined,
    share: one && canLink ? () => setDialog({ kind: 'share', path: pathOf(one), entry: one }) : undefined,
    move: chosen.length && canWrite && !holdsLocked ? () => setDialog({ kind: 'move', paths }) : undefined,
    copy: chosen.length && (path !== '/' || search) ? () => setDialog({ kind: 'copy', paths }) : undefined,
    delete: chosen.length && canWrite && !holdsLocked ? () => setDialog({ kind: 'delete', paths }) : undefined,
    download: chosen.length && (path !== '/' || search) ? () => downloadChosen(chosen) : undefined,
  };

  const onRowClick = (e: Entry, ev: MouseEvent) => {
    // On a touch screen a tap opens, as people expect there; a long press selects, and then taps add or remove rows.
    if (!ev.shiftKey && !ev.ctrlKey && !ev.metaKey && isCoarsePointer())
      return selection.selected.size ? setSelection(sel.click(selection, keys, keyOf(e), { toggle: true })) : open(e);
    setSelection(sel.click(selection, keys, keyOf(e), { shift: ev.shiftKey, toggle: ev.ctrlKey || ev.metaKey }));
  };

  const onKeyDown = (ev: KeyboardEvent, columns: number, pageItems: number) => {
    const ctrl = ev.ctrlKey || ev.metaKey;
    const mods = { shift: ev.shiftKey, keep: ctrl && !ev.shiftKey };
    const moveBy = (d: number) => setSelection(sel.move(selection, keys, d, mods));
    const focused = selection.focus !== null ? byKey.get(selection.focus) : undefined;
    const k = ev.key;
    if (k === 'ArrowDown') moveBy(columns);
    else if (k === 'ArrowUp' && ev.altKey) path !== '/' && navigate(routeOf(parentPath(path)));
    else if (k === 'ArrowUp') moveBy(-columns);
    else if (k === 'ArrowRight' && columns > 1) moveBy(1);
    else if (k === 'ArrowLeft' && columns > 1) moveBy(-1);
    else if (k === 'Home') moveBy(-Infinity);
    else if (k === 'End') moveBy(Infinity);
    else if (k === 'PageDown') moveBy(pageItems);
    else if (k === 'PageUp') moveBy(-pageItems);
    else if (k === ' ') setSelection(sel.toggleFocus(selection.focus ? selection : sel.move(selection, keys, 1)));
    else if (k === 'Enter' && focused) open(focused);
    else if (k === 'Backspace' && !search) path !== '/' && navigate(routeOf(parentPath(path)));
    else if (k === 'Escape') setSelection(sel.emptySelection);
    else if (k === 'Delete' && chosen.length && canWrite) setDialog({ kind: 'delete', paths });
    else if (k === 'F2' && one && canWrite) setDialog({ kind: 'rename', path: pathOf(one), entry: one });
    else if (ctrl && k.toLowerCase() === 'a') setSelection(sel.selectAll(keys, selection));
    else if (ctrl && (k.toLowerCase() === 'c' || k.toLowerCase() === 'x') && chosen.length) setClip({ verb: k.toLowerCase() === 'c' ? 'copy' : 'move', paths });
    else if (ctrl && k.toLowerCase() === 'v' && clip && !readOnly) {
      void doTransfer(clip.verb, clip.paths, path);
      if (clip.verb === 'move') setClip(null);
    } else if (k === 'ContextMenu' || (k === 'F10' && ev.shiftKey)) {
      const r = (selection.focus && document.getElementById(rowId(selection.focus))?.getBoundingClientRect()) || ev.currentTarget.getBoundingClientRect();
      setMenu({ x: r.left + 24, y: r.top + r.height / 2 });
    } else return;
    ev.preventDefault();
  };

  useEffect(() => {
    const slash = (e: globalThis.KeyboardEvent) => {
      const tag = (e.target as HTMLElement).tagName;
      if (e.key === '/' && !['INPUT', 'TEXTAREA', 'SELECT'].includes(tag) && !document.querySelector('dialog[open]')) {
        e.preventDefault();
        searchInput.current?.focus();
      }
    };
    window.addEventListener('keydown', slash);
    return () => window.removeEventListener('keydown', slash);
  }, []);

  const backToRow = useBackToRow(listRef, !!dialog, keys, setSelection);
  const previewable = entries.filter(canPreview);
  const previewAt = dialog?.kind === 'preview' ? previewable.findIndex((e) => pathOf(e) === dialog.path) : -1;
  const showPreview = (i: number) => setDialog({ kind: 'preview', path: pathOf(previewable[i]), entry: previewable[i] });
  const err = search ? search.error : listing.error;

  return (
    <div className="files">
      <Sidebar path={path} tick={quotaTick} onDropInto={dropInto} />
      <section
        className={`pane${dragging ? ' dragging' : ''}`}
        ref={listRef}
        onDragOver={(e) => {
          if (readOnly || !e.dataTransfer.types.includes('Files')) return;
          e.preventDefault();
          setDragging(true);
        }}
        onDragLeave={(e) => !e.currentTarget.contains(e.relatedTarget as Node) && setDragging(false)}
        onDrop={async (e) => {
          if (readOnly) return;
          e.preventDefault();
          setDragging(false);
          void startUpload(await fromDrop(e.dataTransfer));
        }}
      >
        <div className={`toolbars${searchOpen || search ? ' searching' : ''}`}>
          <div className="toolbar" role="toolbar" aria-label={t('files.actions', { name: path })}>
            <Breadcrumb path={path} label={vf.crumb} />
            {path !== '/' && !search && listing.storage?.offline && (
              <span className="pill offline" role="status" title={t('files.offline_hint')}>
                {t('files.offline')}
              </span>
            )}
            {/* Phones: the search field folds behind this button, so the toolbar stays one row. */}
            <button
              type="button"
              className="icon-btn phone-only"
              aria-expanded={searchOpen || !!search}
              aria-label={t('search.label')}
              title={t('search.label')}
              onClick={() => {
                setSearchOpen(!searchOpen);
                if (!searchOpen) setTimeout(() => searchInput.current?.focus());
              }}
            >
              <ToolIcon name="search" />
            </button>
            <SearchBar
              folder={path}
              inputRef={searchInput}
              filters={filters}
              recent={recent}
              onSearch={runSearch}
              active={!!search}
              onClear={() => setSearch(null)}
            />
          </div>
          <ActionsBar
            readOnly={readOnly}
            encrypted={!!vf.folder}
            uploadInput={uploadInput}
            onUpload={(p) => void startUpload(p)}
            onDialog={(kind) => setDialog({ kind })}
            hasNewDoc={docTypes.length > 0}
            act={act}
            oneFile={one?.type === 'file'}
            apps={{ shown: hasApps, count: appItems.length, open: (x, y) => setMenu({ x, y, apps: true }) }}
            onMore={(x, y) => setMenu({ x, y, more: true })}
            onRefresh={() => void refresh()}
            sort={sort}
            dir={dir}
            onSort={setSortOrder}
            view={view}
            onView={setViewMode}
            assistant={{ button: assistant.button, setup: assistant.setup, open: assistantOpen, toggle: () => setAssistantOpen((o) => !o), ref: assistantBtn }}
          />
        </div>
        {search && <h2 className="results-title">{t('search.results', { q: search.q })}</h2>}
        {search && <SearchChips filters={filters} folder={search.folder} onRemove={(key) => runSearch(search.q, without(filters, key))} />}
        {err ? (
          <p className="error" role="alert">
            {errorText(err, t)}
          </p>
        ) : null}
        {!search && vf.gate}
        {!err && !listing.loading && !search && !vf.gate && entries.length === 0 && <EmptyState root={path === '/'} admin={session.user.role === 'admin'} />}
        <FileList
          entries={entries}
          total={total}
          view={view}
          selection={selection}
          sort={sort}
          dir={dir}
          label={t('files.list_label', { path })}
          showLocation={!!search}
          onSort={setSortKey}
          onRowClick={onRowClick}
          onOpen={open}
          onContextMenu={(e, x, y) => {
            if (e && !selection.selected.has(keyOf(e))) setSelection(sel.click(selection, keys, keyOf(e)));
            if (!e) setSelection(sel.emptySelection);
            setMenu({ x, y });
          }}
          onKeyDown={onKeyDown}
          onLongPress={(e) => setSelection(sel.click(selection, keys, keyOf(e), { toggle: !selection.selected.has(keyOf(e)) }))}
          onRowMore={(e) => setSelection(sel.click(selection, keys, keyOf(e)))}
          onRowDragStart={canWrite && path !== '/' ? onRowDragStart : undefined}
          onDropInto={canWrite && path !== '/' && !search ? (e, ev) => dropInto(pathOf(e), ev) : undefined}
        />
        <p className="statusbar" aria-live="polite">
          {t('files.items', { n: total })}
          {chosen.length > 0 && ` · ${t('files.selected', { n: chosen.length })}`}
          {path !== '/' && !search && listing.storage?.readonly && ` · ${t('files.readonly')}`}
          {listing.loading && !search && ` · ${t('common.loading')}`}
        </p>
        {dragging && (
          <div className="dropzone" aria-hidden="true">
            {t('files.drop_here', { path })}
          </div>
        )}
        {chosen.length > 0 && <SelectionBar count={chosen.length} actions={act} onClear={() => setSelection(sel.emptySelection)} />}
      </section>
      {assistantOpen && (
        <Suspense fallback={null}>
          <AssistantPanel
            paths={paths}
            onChanged={afterWrite}
            onClose={() => {
              setAssistantOpen(false);
              assistantBtn.current?.focus();
            }}
          />
        </Suspense>
      )}
      <div className="panels">
        <UploadPanel />
        <OpsPanel />
      </div>
      {appView && <AppViewFrame key={`${appView.plugin}/${appView.view}`} v={appView} onClose={() => setAppView(null)} />}
      {menu && (
        <ContextMenu
          x={menu.x}
          y={menu.y}
          items={menu.apps ? appItems.map((it) => ({ ...it, separator: false })) : menu.more && !chosen.length ? [...folderExtras, ...menuItems] : menuItems}
          label={one ? t('files.actions', { name: one.name }) : t('files.actions', { name: path })}
          onClose={() => setMenu(null)}
        />
      )}
      <FilesDialogs
        dialog={dialog}
        setDialog={setDialog}
        path={path}
        vaultFolder={vf.folder?.id}
        searching={!!search}
        docTypes={docTypes}
        canWrite={canWrite}
        upsert={listing.upsert}
        afterWrite={afterWrite}
        selectOnly={(name) => setSelection(sel.click(sel.emptySelection, [], name))}
        doDelete={doDelete}
        doTransfer={doTransfer}
        previewNav={{
          prev: previewAt > 0 ? () => showPreview(previewAt - 1) : undefined,
          next: previewAt >= 0 && previewAt < previewable.length - 1 ? () => showPreview(previewAt + 1) : undefined,
        }}
        onPreviewClosed={backToRow}
        openWith={openWith}
        runApp={runApp}
      />
    </div>
  );
}
