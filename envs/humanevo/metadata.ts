import { z } from 'zod';

/** What a HumanEvo task carries in `task.metadata`. */
export const HumanEvoMetadata = z.looseObject({
  repo: z.string(),
  /** The commit that added the function (aware start state: its parent), the base and the newest commit. */
  commit: z.string(),
  baseCommit: z.string(),
  latestCommit: z.string().nullish(),
  date: z.string(),
  year: z.number(),
  /** intra-class / intra-file / cross-file (the paper's dependency levels). */
  dependencyLevel: z.string(),
  /** Where the function to write lives: its file and qualified name. */
  targetFile: z.string(),
  targetSymbol: z.string(),
  /** The target's file in the ignored start state, when it moved there since (else targetFile). */
  ignoredTargetFile: z.string().nullish(),
  signature: z.string().nullish(),
  docstring: z.string().nullish(),
  docstringBrief: z.string().nullish(),
  docstringSource: z.string().nullish(),
  /** The start states the task offers, comma-separated (aware, ignored). */
  contexts: z.string(),
  version: z.string().optional(),
});
export type HumanEvoMetadata = z.infer<typeof HumanEvoMetadata>;
