import { z } from 'zod';

/** CoderEval's oracle_context: the names the reference solution uses, per category (or one list). */
export const OracleContext = z.union([z.array(z.string()), z.record(z.string(), z.unknown()), z.string()]);

/** What a CoderEval task carries in `task.metadata`. */
export const CoderEvalMetadata = z.looseObject({
  codereval_id: z.string(),
  project: z.string(),
  filePath: z.string(),
  name: z.string(),
  /** The runnable level (self_contained ... project_runnable), or 'unknown'. */
  level: z.string(),
  standalone: z.union([z.boolean(), z.literal('unknown')]),
  runnableHere: z.boolean(),
  testHasFunction: z.boolean(),
  platformNeeds: z.array(z.string()).optional(),
  docstring: z.string(),
  visibleTest: z.string(),
  options: z.array(z.string()),
  /** Derived from the reference solution: for Acc@k, never for agents (Suite.privateMetadata). */
  oracle_context: OracleContext.optional(),
});
export type CoderEvalMetadata = z.infer<typeof CoderEvalMetadata>;

/** Metadata keys agents never see: oracle_context names what the reference uses. */
export const CODEREVAL_PRIVATE_METADATA = ['oracle_context', 'oracleContext'] as const;
