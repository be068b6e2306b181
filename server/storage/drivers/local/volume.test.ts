import { test } from 'node:test';
import assert from 'node:assert/strict';
import { linuxProbe, macProbe, parseFindmnt, plistStrings, volumeProbe, windowsProbe } from './volume';
import { hasTool } from '../../../../test/helpers/tools';

test('findmnt output: the nested --target form and the flat -l form; a filesystem without a UUID has a null id', () => {
  const nested = '{"filesystems":[{"uuid":null,"target":"/","source":"/dev/vda","children":[{"uuid":"2E0F-A8","target":"/media/usb","source":"/dev/sdb1"}]}]}';
  assert.deepEqual(parseFindmnt(nested), [
    { id: null, mount: '/', source: '/dev/vda' },
    { id: '2E0F-A8', mount: '/media/usb', source: '/dev/sdb1' },
  ]);
  assert.deepEqual(parseFindmnt('{"filesystems":[{"uuid":"u1","target":"/a","source":"s"},{"uuid":"","target":"/b"}]}'), [
    { id: 'u1', mount: '/a', source: 's' },
    { id: null, mount: '/b', source: '' },
  ]);
  assert.deepEqual(parseFindmnt(''), []);
});

test('diskutil plist: the string values by key', () => {
  const xml =
    '<plist><dict><key>VolumeUUID</key>\n<string>6A3F-11</string><key>MountPoint</key><string>/Volumes/Stick</string><key>Ejectable</key><true/></dict></plist>';
  assert.deepEqual(plistStrings(xml), { VolumeUUID: '6A3F-11', MountPoint: '/Volumes/Stick' });
});

test('folders below a mount: relative and back, per OS', () => {
  assert.equal(linuxProbe.relative('/media/usb', '/media/usb/photos/2024'), 'photos/2024');
  assert.equal(linuxProbe.relative('/media/usb', '/media/usb'), '');
  assert.equal(linuxProbe.join('/run/media/me/USB', 'photos/2024'), '/run/media/me/USB/photos/2024');
  assert.equal(linuxProbe.join('/mnt/x', ''), '/mnt/x');
  assert.equal(macProbe.join('/Volumes/Stick 1', 'a'), '/Volumes/Stick 1/a');
  assert.equal(windowsProbe.relative('E:\\', 'E:\\Photos\\2024'), 'Photos/2024');
  assert.equal(windowsProbe.join('F:\\', 'Photos/2024'), 'F:\\Photos\\2024');
});

test('one probe per OS; none where volumes are not tracked', () => {
  assert.equal(volumeProbe('linux'), linuxProbe);
  assert.equal(volumeProbe('darwin'), macProbe);
  assert.equal(volumeProbe('win32'), windowsProbe);
  assert.equal(volumeProbe('freebsd'), null);
});

test('Linux: findmnt names the mount holding a real folder', {
  skip: process.platform !== 'linux' || !hasTool('findmnt') ? 'needs Linux with util-linux (findmnt)' : undefined,
}, async () => {
  const at = await linuxProbe.at(process.cwd());
  assert.ok(process.cwd().startsWith(at.mount), `${at.mount} holds ${process.cwd()}`);
  assert.ok(at.source.length > 0);
  await assert.rejects(linuxProbe.at('/no/such/folder/here'), 'a missing path is an error, never the root filesystem');
});
