/**
 * Desktop entry: hands Electron's real API to the shell (`shell.ts`), which a
 * test runs under plain Node with a stand-in. Only this file and `preload.ts`
 * never run here (docs/desktop.md).
 */
import * as electron from 'electron';
import { autoUpdater } from 'electron-updater';
import Bonjour from 'bonjour-service';
import { join } from 'node:path';
import { utilityFork } from './fork';
import { startShell } from './shell';
import type { AutoUpdaterSurface } from './updater';

if (!electron.app.requestSingleInstanceLock()) electron.app.quit();
else
  void startShell({
    electron,
    autoUpdater: autoUpdater as unknown as AutoUpdaterSurface,
    mdns: () => new Bonjour(),
    fork: (appRoot) => utilityFork(electron.utilityProcess, join(appRoot, 'dist/server/cli.js')),
  });
