import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { z } from 'zod';
import { jsonlRows, readJsonl, readJsonlRows } from '../../src/tasks/jsonl.ts';
import { expectGymError, tempDir } from '../helpers.ts';

const Row = z.object({ a: z.number() });

describe('the JSON Lines reader', () => {
  let dir: string;
  const file = async (name: string, content: string) => {
    const f = path.join(dir, name);
    await fs.writeFile(f, content);
    return f;
  };
  before(async () => {
    dir = await tempDir('benchgym-jsonl-');
  });
  after(() => fs.rm(dir, { recursive: true, force: true }));

  test('rows keep their line numbers; blank lines and CRLF endings are fine', async () => {
    const f = await file('a.jsonl', '{"a":1}\n\n{"a":2}\r\n  \n{"a":3}');
    assert.deepEqual(await readJsonlRows(f, Row), [
      { row: { a: 1 }, line: 1 },
      { row: { a: 2 }, line: 3 },
      { row: { a: 3 }, line: 5 },
    ]);
  });

  test('a row that is not JSON or does not fit names the file and line, with the code asked for', async () => {
    await expectGymError(readJsonl(await file('b.jsonl', '{"a":1}\nnope\n'), Row), 'TASK_INVALID', /b\.jsonl:2: not JSON/);
    await expectGymError(
      readJsonl(await file('c.jsonl', '{"a":1}\n{"a":"x"}\n'), Row, { code: 'INVALID_ARGUMENT' }),
      'INVALID_ARGUMENT',
      /c\.jsonl:2: 'a': /,
    );
  });

  test('a file that cannot be read names what it is', async () => {
    await expectGymError(
      readJsonl(path.join(dir, 'none.jsonl'), Row, { what: 'the record file' }),
      'SUITE_NOT_FOUND',
      /^cannot read the record file .*none\.jsonl: ENOENT/,
    );
    await expectGymError(readJsonl(dir, Row, { unreadable: 'INVALID_ARGUMENT' }), 'INVALID_ARGUMENT', /^cannot read .*EISDIR/);
  });

  test('arrays: a JSON array file is read as its items, a JSON Lines file as before', async () => {
    assert.deepEqual(await readJsonlRows(await file('d.json', ' [{"a":1},\n{"a":2}]'), Row, { arrays: true }), [
      { row: { a: 1 }, line: 1 },
      { row: { a: 2 }, line: 2 },
    ]);
    assert.deepEqual(await readJsonl(await file('e.jsonl', '{"a":1}\n'), Row, { arrays: true }), [{ a: 1 }]);
    await expectGymError(readJsonl(await file('f.json', '[{"a":1},'), Row, { arrays: true }), 'TASK_INVALID', /f\.json: not JSON/);
    await expectGymError(readJsonl(await file('g.json', '[{"a":1},{"b":2}]'), Row, { arrays: true }), 'TASK_INVALID', /g\.json:2: 'a': /);
  });

  test("invalid: 'skip' passes over bad rows; each row keeps its text; stopping early is fine", async () => {
    const f = await file('h.jsonl', '{"a":1}\nnope\n{"b":2}\n{"a": 4}\n');
    const rows = [];
    for await (const r of jsonlRows(f, Row, { invalid: 'skip' })) rows.push(r);
    assert.deepEqual(rows, [
      { row: { a: 1 }, line: 1, text: '{"a":1}' },
      { row: { a: 4 }, line: 4, text: '{"a": 4}' },
    ]);
    for await (const r of jsonlRows(f, Row, { invalid: 'skip' })) {
      assert.equal(r.line, 1);
      break;
    }
  });
});
