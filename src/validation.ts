import { z } from 'zod';
import { GymError } from './errors.ts';

/** Formats zod issues as "field: problem" pairs, so every error names what was wrong. */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const field = issue.path.length ? issue.path.map(String).join('.') : '(arguments)';
      return `'${field}': ${issue.message}`;
    })
    .join('; ');
}

/** Parses untrusted input at an edge; throws INVALID_ARGUMENT naming the offending fields. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, what: string): z.infer<S> {
  const result = schema.safeParse(input ?? {});
  if (!result.success) {
    throw new GymError('INVALID_ARGUMENT', `invalid ${what}: ${describeIssues(result.error)}`, {
      fields: result.error.issues.map((i) => i.path.map(String).join('.')),
    });
  }
  return result.data;
}
