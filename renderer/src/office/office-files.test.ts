import { test } from 'node:test';
import assert from 'node:assert/strict';
import { editorRoute, namedPdfUrl, officeOpenTarget, pdfUrl } from './office-files';

const on = { external: { docserver_url: 'http://docs.lan', diagram_url: '', text_diagram: false } };
const off = { external: { docserver_url: '', diagram_url: '', text_diagram: false } };
const file = (name: string) => ({ name, type: 'file' as const });

test('office files open in the editor when a document server is configured, else as a PDF rendition', () => {
  for (const n of ['a.docx', 'B.XLSX', 'c.pptx', 'd.odt', 'e.ods', 'f.odp', 'g.rtf']) assert.equal(officeOpenTarget(file(n), on), 'editor', n);
  for (const n of ['a.docx', 'B.XLSX', 'c.pptx', 'd.odt', 'e.ods', 'f.odp']) assert.equal(officeOpenTarget(file(n), off), 'pdf', n);
  // Before the capabilities are known, office files preview.
  assert.equal(officeOpenTarget(file('a.docx'), null), 'pdf');
});

test('types the file manager shows itself, folders and other files are not office targets', () => {
  for (const n of ['a.txt', 'a.csv', 'a.pdf', 'a.html', 'a.xml', 'a.md', 'a.drawio', 'a.png', 'docx']) {
    assert.equal(officeOpenTarget(file(n), on), null, n);
    assert.equal(officeOpenTarget(file(n), off), null, n);
  }
  assert.equal(officeOpenTarget({ name: 'x.docx', type: 'dir' }, on), null);
});

test('routes: the editor page and the PDF rendition take the UI path encoded', () => {
  assert.equal(editorRoute('/Docs/a b.docx'), '/edit?path=%2FDocs%2Fa+b.docx');
  assert.equal(pdfUrl('/Docs/ü.docx'), '/api/files/pdf?path=%2FDocs%2F%C3%BC.docx');
  // The viewer titles and saves by the URL's last segment: the document's own name with .pdf (issue 39 item 18).
  assert.equal(namedPdfUrl('/Docs/ü rapor.v2.docx', 'ü rapor.v2.docx'), '/api/files/pdf/%C3%BC%20rapor.v2.pdf?path=%2FDocs%2F%C3%BC+rapor.v2.docx');
  assert.equal(namedPdfUrl('/Docs/a#b?.docx', 'a#b?.docx'), '/api/files/pdf/a%23b%3F.pdf?path=%2FDocs%2Fa%23b%3F.docx');
});
