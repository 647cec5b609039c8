import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CappedOutput } from '../../src/sandbox/output.ts';

const alphabet = 'abcdefghijklmnopqrstuvwxyz';

test('output under the limit is kept whole', () => {
  const out = new CappedOutput(100);
  out.push(Buffer.from('hello '));
  out.push(Buffer.from('world'));
  assert.equal(out.text(), 'hello world');
  assert.equal(out.total, 11);
  assert.equal(out.dropped, 0);
});

test('output exactly at the limit is kept whole', () => {
  const out = new CappedOutput(26);
  out.push(Buffer.from(alphabet));
  assert.equal(out.text(), alphabet);
  assert.equal(out.dropped, 0);
});

test('one large chunk keeps its head and tail and counts the rest', () => {
  const out = new CappedOutput(10);
  out.push(Buffer.from(alphabet));
  assert.equal(out.total, 26);
  assert.equal(out.dropped, 16);
  const text = out.text();
  assert.ok(text.startsWith('abcde\n'), text);
  assert.ok(text.endsWith('\nvwxyz'), text);
  assert.match(text, /16 bytes omitted \(26 in all\)/);
});

test('many small chunks give the same head and tail as one big one', () => {
  const out = new CappedOutput(10);
  for (const c of alphabet) out.push(Buffer.from(c));
  assert.equal(out.total, 26);
  assert.equal(out.dropped, 16);
  assert.ok(out.text().startsWith('abcde\n'));
  assert.ok(out.text().endsWith('\nvwxyz'));
});

test('chunks of mixed sizes crossing the head and tail boundaries', () => {
  const data = Buffer.from(alphabet.repeat(40));
  const out = new CappedOutput(64);
  for (let i = 0, size = 1; i < data.length; i += size, size = ((size * 7) % 53) + 1) out.push(data.subarray(i, i + size));
  assert.equal(out.total, data.length);
  assert.equal(out.dropped, data.length - 64);
  const text = out.text();
  assert.ok(text.startsWith(data.subarray(0, 32).toString() + '\n'));
  assert.ok(text.endsWith('\n' + data.subarray(data.length - 32).toString()));
});

test('an odd limit gives the extra byte to the head', () => {
  const out = new CappedOutput(5);
  out.push(Buffer.from(alphabet));
  assert.equal(out.dropped, 21);
  assert.ok(out.text().startsWith('abc\n'));
  assert.ok(out.text().endsWith('\nyz'));
});

test('a limit of 1 keeps only a head byte', () => {
  const out = new CappedOutput(1);
  out.push(Buffer.from('xyz'));
  out.push(Buffer.from('123'));
  assert.equal(out.total, 6);
  assert.equal(out.dropped, 5);
  assert.ok(out.text().startsWith('x\n'));
});

test('a chunk larger than the limit, then a small one: the tail moves on', () => {
  const out = new CappedOutput(8);
  const buf = Buffer.from('AAAAAAAAAAAA');
  out.push(buf);
  out.push(Buffer.from('tail'));
  assert.ok(out.text().startsWith('AAAA\n'));
  assert.ok(out.text().endsWith('tail'));
});

test('megabytes pushed keep memory bounded to the limit', () => {
  const out = new CappedOutput(1024);
  const chunk = Buffer.alloc(65536, 0x61);
  for (let i = 0; i < 200; i++) out.push(chunk);
  assert.equal(out.total, 200 * 65536);
  assert.equal(out.dropped, 200 * 65536 - 1024);
  assert.ok(out.text().length < 1024 + 200);
});
