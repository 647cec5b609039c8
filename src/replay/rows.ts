import type { z } from 'zod';
import { readJsonlRows } from '../tasks/jsonl.ts';
import { describeIssues } from '../validation.ts';
import type { ReplayRow } from './adapter.ts';

/**
 * The rows of a predictions file, each validated by the suite's row schema: JSON Lines, or a
 * JSON list (some harnesses take both). Errors name the file and the line (list item).
 */
export function readReplayRows<Row>(
  file: string,
  schema: z.ZodType<Row>,
  describe: (error: z.ZodError) => string = describeIssues,
): Promise<ReplayRow<Row>[]> {
  return readJsonlRows(file, schema, {
    code: 'INVALID_ARGUMENT',
    unreadable: 'INVALID_ARGUMENT',
    what: 'the predictions file',
    describe,
    arrays: true,
  });
}
