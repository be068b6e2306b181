/**
 * The file manager's dialogs: new folder, text file and document, rename,
 * delete, move/copy, preview, editor, versions, share, upload request and an
 * app's confirmation. The page owns which one is open (`DialogState`).
 */
import type { Entry, NewdocType } from '../api/types';
import { useCapabilities } from '../api/capabilities';
import { useI18n } from '../i18n';
import { navigate } from '../lib/router';
import { baseName, joinPath } from '../lib/ui-path';
import { NameDialog, ConfirmDialog } from '../ui/forms';
import { ShareDialog } from '../share/share-dialog';
import { RequestDialog } from '../share/request-dialog';
import { editorRoute, isEditorType } from '../office/office-files';
import { NewDocDialog } from '../office/new-doc-dialog';
import type { AppAction, OpenRule } from '../apps/apps-api';
import { pickLabel } from '../apps/surface/logic';
import { diagramRoute, isDiagramName } from './diagram/diagram-route';
import { FolderPicker } from './folder-picker';
import { Preview } from './preview';
import { TextEditor } from './text-editor';
import { VersionsDialog } from './versions-dialog';
import { isTextName } from './highlight';
import * as files from './file-api';
import * as vaultNames from '../vault/vault-names';
import { NewVaultFolder } from '../vault/new-vault-folder';
import { MembersDialog } from '../vault/members-dialog';

export type DialogState =
  | { kind: 'mkdir' | 'newtext' | 'newdoc' | 'shortcuts' | 'vault-mkdir' }
  | { kind: 'rename' | 'share' | 'request' | 'preview' | 'edit' | 'versions'; path: string; entry?: Entry }
  | { kind: 'delete' | 'move' | 'copy'; paths: string[] }
  | { kind: 'app-confirm'; action: AppAction; paths: string[] }
  | { kind: 'members'; folderId: number; name: string }
  | null;

export interface FilesDialogsProps {
  dialog: DialogState;
  setDialog(d: DialogState): void;
  /** The open folder. */
  path: string;
  /** The encrypted folder the open folder is in: new names are encrypted (vault/vault-files.ts). */
  vaultFolder?: number;
  /** Search results are shown: a rename is not applied to the folder's listing. */
  searching: boolean;
  docTypes: NewdocType[];
  canWrite: boolean;
  /** Puts an entry into the open listing at once (the server's frame follows). */
  upsert(e: Entry, oldName?: string): void;
  afterWrite(): void;
  selectOnly(name: string): void;
  doDelete(paths: string[]): Promise<void>;
  doTransfer(verb: 'copy' | 'move', paths: string[], dest: string): Promise<void>;
  previewNav: { prev?: () => void; next?: () => void };
  onPreviewClosed(e: Entry): void;
  openWith(r: OpenRule, path: string): Promise<void>;
  runApp(a: AppAction, paths: string[]): Promise<void>;
}

export function FilesDialogs({
  dialog,
  setDialog,
  path,
  vaultFolder,
  searching,
  docTypes,
  canWrite,
  upsert,
  afterWrite,
  selectOnly,
  doDelete,
  doTransfer,
  previewNav,
  onPreviewClosed,
  openWith,
  runApp,
}: FilesDialogsProps) {
  const { t, lang } = useI18n();
  const caps = useCapabilities();
  return (
    <>
      {dialog?.kind === 'mkdir' && (
        <NameDialog
          title={t('files.new_folder')}
          label={t('files.folder_name')}
          submitLabel={t('common.create')}
          onClose={() => setDialog(null)}
          onSubmit={async (name) => {
            const stored = vaultFolder ? await vaultNames.mkdir(vaultFolder, path, name, t) : (await files.mkdir(path, name), name);
            upsert({ id: 0, name: stored, type: 'dir', size: 0, modified: new Date().toISOString() });
            afterWrite();
          }}
        />
      )}
      {dialog?.kind === 'vault-mkdir' && <NewVaultFolder path={path} onClose={() => setDialog(null)} onMade={afterWrite} />}
      {dialog?.kind === 'newtext' && (
        <NameDialog
          title={t('files.new_text')}
          label={t('files.file_name')}
          initial="new.txt"
          submitLabel={t('common.create')}
          onClose={() => setDialog(null)}
          onSubmit={async (name) => {
            // The server adds `.txt` only when the name has no extension; its answer names the file it made.
            const r = await files.newFile(path, name, 'txt');
            afterWrite();
            const made = r?.entry?.name ?? name;
            setTimeout(() => setDialog({ kind: 'edit', path: joinPath(path, made) }));
          }}
        />
      )}
      {dialog?.kind === 'newdoc' && docTypes.length > 0 && (
        <NewDocDialog
          types={docTypes}
          onClose={() => setDialog(null)}
          onSubmit={async (name, type: NewdocType) => {
            const r = await files.newFile(path, name, type.ext);
            afterWrite();
            const made = joinPath(path, r?.entry?.name ?? name);
            // Office documents and diagrams open in their editors; text opens in ours; anything else stays in the list.
            if (type.requires === 'docserver' && caps?.external.docserver_url && isEditorType(made)) navigate(editorRoute(made));
            else if (isDiagramName(made) && caps?.external.diagram_url) navigate(diagramRoute(made));
            else if (type.group === 'text') setTimeout(() => setDialog({ kind: 'edit', path: made }));
          }}
        />
      )}
      {dialog?.kind === 'rename' && dialog.entry && (
        <NameDialog
          title={t('files.rename')}
          label={t('files.new_name')}
          initial={dialog.entry.name}
          keepExtension={dialog.entry.type === 'file'}
          submitLabel={t('files.rename')}
          onClose={() => setDialog(null)}
          onSubmit={async (name) => {
            if (name === dialog.entry!.name) return;
            const vaultRow = vaultNames.shownRow(dialog.entry!);
            if (vaultRow) return void (await vaultNames.rename(vaultRow, dialog.path, name, t), afterWrite());
            await files.rename(dialog.path, name);
            if (!searching) upsert({ ...dialog.entry!, name }, dialog.entry!.name);
            selectOnly(name);
            afterWrite();
          }}
        />
      )}
      {dialog?.kind === 'delete' && (
        <ConfirmDialog
          title={t('files.delete')}
          text={t('files.confirm_delete', { n: dialog.paths.length, name: baseName(dialog.paths[0] ?? '') })}
          confirmLabel={t('common.delete')}
          danger
          onConfirm={() => void doDelete(dialog.paths)}
          onClose={() => setDialog(null)}
        />
      )}
      {(dialog?.kind === 'move' || dialog?.kind === 'copy') && (
        <FolderPicker
          title={t(dialog.kind === 'move' ? 'files.move' : 'files.copy')}
          start={path}
          onClose={() => setDialog(null)}
          onPick={(dest) => void doTransfer(dialog.kind as 'move' | 'copy', dialog.paths, dest)}
        />
      )}
      {dialog?.kind === 'preview' && dialog.entry && (
        <Preview
          entry={dialog.entry}
          path={dialog.path}
          onClose={() => {
            onPreviewClosed(dialog.entry!);
            setDialog(null);
          }}
          onOpenWith={(r) => {
            setDialog(null);
            void openWith(r, dialog.path);
          }}
          onPrev={previewNav.prev}
          onNext={previewNav.next}
          onEdit={
            isTextName(dialog.entry.name, dialog.entry.mime) && canWrite && !vaultFolder
              ? () => setDialog({ kind: 'edit', path: dialog.path, entry: dialog.entry })
              : undefined
          }
        />
      )}
      {dialog?.kind === 'edit' && <TextEditor path={dialog.path} etag={dialog.entry?.etag} onSaved={afterWrite} onClose={() => setDialog(null)} />}
      {dialog?.kind === 'versions' && <VersionsDialog path={dialog.path} onRestored={afterWrite} onClose={() => setDialog(null)} />}
      {dialog?.kind === 'share' && <ShareDialog path={dialog.path} entry={dialog.entry} onClose={() => setDialog(null)} />}
      {dialog?.kind === 'members' && <MembersDialog folderId={dialog.folderId} name={dialog.name} onClose={() => setDialog(null)} />}
      {dialog?.kind === 'request' && <RequestDialog path={dialog.path} onClose={() => setDialog(null)} />}
      {dialog?.kind === 'app-confirm' && (
        <ConfirmDialog
          title={t('apps.confirm_title', { label: pickLabel(dialog.action.label, lang) })}
          text={pickLabel(dialog.action.confirm, lang)}
          confirmLabel={t('apps.run')}
          danger={dialog.action.danger}
          onConfirm={() => void runApp(dialog.action, dialog.paths)}
          onClose={() => setDialog(null)}
        />
      )}
      {dialog?.kind === 'shortcuts' && (
        <ConfirmDialog
          title={t('files.shortcuts')}
          text={t('files.shortcuts.help')}
          confirmLabel={t('common.ok')}
          onConfirm={() => {}}
          onClose={() => setDialog(null)}
        />
      )}
    </>
  );
}
