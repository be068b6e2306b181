/**
 * The typed bridge between the sandboxed page and the main process: exactly
 * the `DesktopBridge` members, as `window.filedockDesktop`. Every call is a
 * narrow IPC request that main checks against the sender's origin; the page
 * gets no Node, no ipcRenderer and no Electron objects.
 */
import { contextBridge, ipcRenderer } from 'electron';
import { IPC, type DesktopBridge, type DesktopSettings } from './types';

const bridge: DesktopBridge = {
  appVersion: String(ipcRenderer.sendSync(IPC.appVersion)),
  openExternal: (url: string) => ipcRenderer.invoke(IPC.openExternal, String(url)),
  getSettings: () => ipcRenderer.invoke(IPC.getSettings),
  updateSettings: (patch: Partial<DesktopSettings>) => ipcRenderer.invoke(IPC.updateSettings, { ...patch }),
  runPublicSelfTest: () => ipcRenderer.invoke(IPC.publicSelfTest),
};

contextBridge.exposeInMainWorld('filedockDesktop', bridge);
