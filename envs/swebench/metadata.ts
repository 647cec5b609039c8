import { z } from 'zod';

/** What a SWE-bench task carries in `task.metadata`. */
export const SwebenchMetadata = z.looseObject({
  repo: z.string(),
  base_commit: z.string(),
  version: z.union([z.string(), z.number()]).optional(),
  /** Which schema the instance was read in (SWE-bench, Multi-SWE-bench). */
  schema: z.string(),
  created_at: z.string().optional(),
  environment_setup_commit: z.string().optional(),
  /** Whether the repository's harness settings come from the table of known specs or the default. */
  spec: z.enum(['table', 'default']),
  spec_note: z.string().optional(),
});
export type SwebenchMetadata = z.infer<typeof SwebenchMetadata>;
