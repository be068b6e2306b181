export { loadConfig, ConfigError, defaultDataDir } from './load';
export { SETTINGS, type Config, type SettingKey } from './schema';
