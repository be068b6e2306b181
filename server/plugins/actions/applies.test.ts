import { test } from 'node:test';
import assert from 'node:assert/strict';
import { misfit, type SelectedItem } from './applies';

const file = (name: string, o: Partial<SelectedItem> = {}): SelectedItem => ({
  type: 'file',
  name,
  mime: name.endsWith('.pdf') ? 'application/pdf' : 'text/plain',
  state: [],
  writable: true,
  ...o,
});

test('each condition of the applies rule refuses what does not fit, and lets the rest through', () => {
  assert.equal(misfit(undefined, 'p', [file('a.txt')]), null);
  assert.match(misfit(undefined, 'p', [file('a.txt'), file('b.txt')])!, /at most 1/); // multi unset: one item
  assert.equal(misfit({ multi: true }, 'p', [file('a.txt'), file('b.txt')]), null);
  assert.match(misfit({ multi: true, min: 3 }, 'p', [file('a.txt'), file('b.txt')])!, /at least 3/);
  assert.match(misfit({ multi: true, max: 1 }, 'p', [file('a'), file('b')])!, /at most 1/);
  assert.match(misfit({ kind: 'dir' }, 'p', [file('a.txt')])!, /folder/);
  assert.equal(misfit({ kind: 'dir' }, 'p', [{ ...file('x'), type: 'dir', mime: '' }]), null);
  assert.match(misfit({ ext: ['pdf'] }, 'p', [file('a.txt')])!, /\.pdf/);
  assert.equal(misfit({ ext: ['pdf'] }, 'p', [file('A.PDF', { mime: 'application/pdf' })]), null);
  assert.match(misfit({ ext: ['pdf'] }, 'p', [{ ...file('x.pdf'), type: 'dir' }])!, /\.pdf/);
  assert.equal(misfit({ mime: ['text/*'] }, 'p', [file('a.txt')]), null);
  assert.match(misfit({ mime: ['image/*'] }, 'p', [file('a.txt')])!, /image/);
  assert.match(misfit({ state: ['out'] }, 'p', [file('a.txt')])!, /not in state/);
  assert.equal(misfit({ state: ['out'] }, 'p', [file('a.txt', { state: ['p:out'] })]), null);
  assert.match(misfit({ state: ['out'] }, 'p', [file('a.txt', { state: ['other:out'] })])!, /not in state/); // another app's key
  assert.match(misfit({ no_state: ['out'] }, 'p', [file('a.txt', { state: ['p:out'] })])!, /in state/);
  assert.match(misfit({ writable: true }, 'p', [file('a.txt', { writable: false })])!, /cannot change/);
  assert.match(misfit({}, 'p', [])!, /at least 1/);
  assert.equal(misfit({ min: 0 }, 'p', []), null);
});
