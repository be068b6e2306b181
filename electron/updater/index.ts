/** The desktop updater: electron-updater behind the tray's DesktopUpdater and the server's install port shape. */
export {
  createDesktopUpdater,
  type AutoUpdaterSurface,
  type DesktopInstallPort,
  type DesktopUpdaterOptions,
  type DesktopUpdaterHandle,
} from './desktop-updater';
