import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { DriverDescriptor } from '../api/types';
import { initialValues, toConfig, missingRequired, optionsOf } from './driver-form';

const sftp: DriverDescriptor = {
  driver: 'sftp',
  label: 'SFTP',
  capabilities: { read: true },
  fields: [
    { key: 'host', type: 'string', required: true, label: 'Host' },
    { key: 'user', type: 'string', required: true, label: 'User', aliases: ['username'] },
    { key: 'password', type: 'password', secret: true, label: 'Password' },
    { key: 'port', type: 'int', label: 'Port', default: 22 },
    { key: 'root', type: 'string', required: true, root: true, label: 'Root', aliases: ['base_path'] },
    { key: 'insecure_skip_host_key', type: 'bool', label: 'Skip' },
    { key: 'mode', type: 'select', label: 'Mode', options: ['a', { value: 'b', label: 'Bee' }] },
  ],
};

test('values come from the config, its aliases, then defaults', () => {
  const v = initialValues(sftp, { host: 'h', username: 'u', password: '***', base_path: '/srv/x' });
  assert.deepEqual(v, { host: 'h', user: 'u', password: '***', port: '22', root: '/srv/x', insecure_skip_host_key: false, mode: '' });
});

test('config is typed by field and drops empty optional values', () => {
  const v = { ...initialValues(sftp), host: ' h ', user: 'u', root: '/r', port: '2222', insecure_skip_host_key: true };
  assert.deepEqual(toConfig(sftp, v), { host: 'h', user: 'u', port: 2222, root: '/r', insecure_skip_host_key: true });
});

test('required fields left empty are reported; select options normalise', () => {
  assert.deepEqual(missingRequired(sftp, initialValues(sftp)), ['host', 'user', 'root']);
  assert.deepEqual(optionsOf(sftp.fields[6]), [
    { value: 'a', label: 'a' },
    { value: 'b', label: 'Bee' },
  ]);
});
