/**
 * Admin-editable settings kept in the `settings` table (key → JSON value).
 * Each key has one definition here: its default and its check. Modules read
 * through `get` (a missing or unreadable row reads as the default) and the
 * admin API writes through `set`, which refuses values out of range with
 * `validation_failed` naming the key.
 */
export { SettingsStore, SETTINGS, type SettingKey, type SettingValues, type WebhookTargetSetting, type MetricsSetting } from './settings.store';
