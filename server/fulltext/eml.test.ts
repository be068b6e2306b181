import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { extractText, TEXT_CAP, type FileSource } from './extract';
import { decodeHeader, MAX_DEPTH, MAX_EML_BYTES, MAX_PARTS, parseParams, splitMultipart } from './eml';

const message = (lines: string[]) => Buffer.from(lines.join('\r\n'), 'latin1');
const src = (bytes: Buffer, name = 'mail.eml', mime: string | null = null): FileSource => ({
  name,
  size: bytes.length,
  mime,
  localFile: async () => null,
  read: async (r) => Readable.from([bytes.subarray(r.start, r.end + 1)]),
});
const run = (s: FileSource) => extractText(s, new AbortController().signal, '/tmp');
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

test('headers: encoded words (B and Q, any charset, adjacent ones joined), raw UTF-8, RFC 2231 parameters', () => {
  assert.equal(decodeHeader('=?utf-8?B?xZ51YmF0IHJhcG9ydQ==?='), 'Şubat raporu');
  assert.equal(decodeHeader('=?ISO-8859-9?Q?=DDstanbul_ofisi?= =?utf-8?q?_caf=C3=A9?= ok'), 'İstanbul ofisi café ok');
  assert.equal(decodeHeader(Buffer.from('Grüße', 'utf8').toString('latin1')), 'Grüße');
  assert.equal(decodeHeader('=?x-unknown?Q?caf=C3=A9?='), 'café', 'an unknown charset: valid UTF-8 is read as UTF-8');
  assert.equal(decodeHeader('=?x-unknown?Q?caf=E9?='), 'café', 'else Windows-1252');
  const p = parseParams(`attachment; filename*0*=utf-8''%C3%A7izelge; filename*1=".pdf"; size=12`);
  assert.equal(p.value, 'attachment');
  assert.equal(p.params.get('filename'), 'çizelge.pdf');
  assert.equal(parseParams('Multipart/Mixed; boundary="a;b\\"c"').params.get('boundary'), 'a;b"c');
  assert.equal(parseParams('text/plain; name="=?utf-8?B?w7Z6ZXQudHh0?="').params.get('name'), 'özet.txt');
});

test('a multipart message: shown headers, the plain alternative decoded, html stripped, attachment names but not bodies, a forwarded message', async () => {
  const eml = message([
    'Received: from mx by hub',
    'From: =?utf-8?Q?G=C3=BCl_Y=C4=B1lmaz?= <gul@example.org>',
    'To: team@example.org,',
    '  boss@example.org',
    'Cc: ops@example.org',
    'Subject: =?utf-8?B?TnVtYmF0?= =?utf-8?B?IHF1YXJ0ZXJseQ==?=',
    'Date: Tue, 01 Dec 2026 10:00:00 +0300',
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="outer"',
    '',
    'This is the preamble, not text.',
    '--outer',
    'Content-Type: multipart/alternative; boundary=inner',
    '',
    '--inner',
    'Content-Type: text/plain; charset=utf-8',
    'Content-Transfer-Encoding: quoted-printable',
    '',
    'The wombat budget is caf=C3=A9-sized and this line is soft=',
    '-wrapped.',
    '--inner',
    'Content-Type: text/html; charset=utf-8',
    '',
    '<p>The HTML twin says the same</p>',
    '--inner--',
    '--outer',
    'Content-Type: text/html; charset=windows-1254',
    'Content-Transfer-Encoding: base64',
    '',
    ...(Buffer.from('<html><style>p{}</style><body><p>Kestrel &amp; \xdeubat</p><script>var hidden=1</script></body></html>', 'latin1')
      .toString('base64')
      .match(/.{1,76}/g) ?? []),
    '--outer',
    'Content-Type: application/pdf; name="invoice-march.pdf"',
    'Content-Disposition: attachment; filename="invoice-march.pdf"',
    'Content-Transfer-Encoding: base64',
    '',
    b64('%PDF-1.4 secretword inside the attachment'),
    '--outer',
    'Content-Type: text/plain',
    'Content-Disposition: attachment; filename="notes.txt"',
    '',
    'attachedword in a text attachment',
    '--outer',
    'Content-Type: message/rfc822',
    '',
    'From: Inner Sender <inner@example.org>',
    'Subject: Forwarded echidna news',
    '',
    'Body of the forwarded echidna message.',
    '--outer--',
    'The epilogue, not text either.',
  ]);
  const r = await run(src(eml));
  assert.equal(
    r.text,
    [
      'From: Gül Yılmaz <gul@example.org>',
      'To: team@example.org, boss@example.org',
      'Cc: ops@example.org',
      'Subject: Numbat quarterly',
      'Date: Tue, 01 Dec 2026 10:00:00 +0300',
      'The wombat budget is café-sized and this line is soft-wrapped.',
      'Kestrel & Şubat',
      'Attachment: invoice-march.pdf',
      'Attachment: notes.txt',
      'From: Inner Sender <inner@example.org>',
      'Subject: Forwarded echidna news',
      'Body of the forwarded echidna message.',
    ].join('\n'),
  );
  assert.equal(r.capped, false);
  // Found by its MIME type without the extension too.
  assert.equal((await run(src(eml, 'message', 'message/rfc822'))).text, r.text);
});

test('malformed messages give what they hold: no closing boundary, no blank line, no headers, LF line ends, a multipart without a boundary', async () => {
  const unclosed = await run(
    src(
      message([
        'Subject: unclosed',
        'Content-Type: multipart/mixed; boundary=b',
        '',
        '--b',
        '',
        'first dugong part',
        '--b',
        'Content-Type: text/plain',
        '',
        'last dugong part, never closed',
      ]),
    ),
  );
  assert.equal(unclosed.text, 'Subject: unclosed\nfirst dugong part\nlast dugong part, never closed');
  // A longer boundary that starts like the real one is not a delimiter.
  assert.deepEqual(splitMultipart('--b\n\none\n--bb\n--b\n\ntwo\n--b--\n', 'b'), ['\none\n--bb', '\ntwo']);
  assert.equal((await run(src(Buffer.from('Subject: only headers\nFrom: a@b')))).text, 'From: a@b\nSubject: only headers');
  assert.equal((await run(src(Buffer.from('\nno headers, just a tapir')))).text, 'no headers, just a tapir');
  assert.equal((await run(src(Buffer.from('Subject: lf\nContent-Type: text/plain\n\nunix line ends')))).text, 'Subject: lf\nunix line ends');
  assert.equal((await run(src(message(['Subject: lost', 'Content-Type: multipart/mixed', '', 'no boundary to split at'])))).text, 'Subject: lost');
  assert.equal((await run(src(message(['Content-Type: text/plain; charset=x-unheard-of', '', 'plain ascii survives'])))).text, 'plain ascii survives');
  // Alternatives without a plain one: the first (here HTML), not both.
  const htmlOnly = [
    'Content-Type: multipart/alternative; boundary=a',
    '',
    '--a',
    'Content-Type: text/html',
    '',
    '<b>first</b> serval',
    '--a',
    'Content-Type: text/enriched',
    '',
    'second serval',
    '--a--',
  ];
  assert.equal((await run(src(message(htmlOnly)))).text, 'first serval');
});

test(`bounds: a 10 MB base64 line, nesting past ${MAX_DEPTH} levels, more than ${MAX_PARTS} parts`, async () => {
  const line = 'QUFB'.repeat((10 * 1024 * 1024) / 4);
  const big = message([
    'Subject: big attachment',
    'Content-Type: multipart/mixed; boundary=z',
    '',
    '--z',
    '',
    'the text before it',
    '--z',
    'Content-Type: application/zip; name=big.zip',
    'Content-Transfer-Encoding: base64',
    '',
    line,
    '--z--',
  ]);
  let t = Date.now();
  const r = await run(src(big));
  assert.equal(r.text, 'Subject: big attachment\nthe text before it\nAttachment: big.zip');
  assert.equal(r.capped, true, `only ${MAX_EML_BYTES} bytes are read`);
  assert.ok(Date.now() - t < 5000, `${Date.now() - t} ms`);

  // The same line as the body of the text: read up to the file bound, stored up to TEXT_CAP.
  t = Date.now();
  const body = await run(src(message(['Content-Type: text/plain', 'Content-Transfer-Encoding: base64', '', line])));
  assert.equal(body.text.length, TEXT_CAP);
  assert.match(body.text, /^A+$/);
  assert.equal(body.capped, true);
  assert.ok(Date.now() - t < 5000, `${Date.now() - t} ms`);

  let deep = 'innermost word';
  for (let level = 30; level >= 1; level--)
    deep = `Content-Type: multipart/mixed; boundary=L${level}\n\n--L${level}\n\nlevel${level} text\n--L${level}\n${deep}\n--L${level}--\n`;
  const nested = await run(src(Buffer.from(deep)));
  assert.match(nested.text, /level1 text/);
  assert.match(nested.text, new RegExp(`level${MAX_DEPTH} text`));
  assert.doesNotMatch(nested.text, new RegExp(`level${MAX_DEPTH + 1} text|innermost`));
  assert.equal(nested.capped, true);

  const many = ['Content-Type: multipart/mixed; boundary=m', ''];
  for (let i = 0; i < MAX_PARTS + 50; i++) many.push('--m', '', `part${i}`);
  const wide = await run(src(message(many)));
  assert.match(wide.text, new RegExp(`part${MAX_PARTS - 2}\\b`));
  assert.doesNotMatch(wide.text, new RegExp(`part${MAX_PARTS}\\b`));
  assert.equal(wide.capped, true);
});
