import { z } from 'zod';

/** What a GitChameleon task carries in `task.metadata` (both dataset forms). */
export const GitChameleonMetadata = z.looseObject({
  /** The dataset form the task came from: v1 (assertion scripts) or v2 (pytest files). */
  form: z.enum(['v1', 'v2']),
  library: z.string(),
  /** The library version the problem targets, and the one installed (v1 may install a nearby one). */
  version: z.string(),
  installedVersion: z.string(),
  pythonVersion: z.string(),
  typeOfChange: z.string().optional(),
  releaseDate: z.string().optional(),
  releaseYear: z.number().optional(),
  nameOfClassOrFunc: z.string().optional(),
  heavy: z.boolean(),
  /** The module the library is imported as (scikit-learn → sklearn): view_docs looks bare names up in it. */
  importName: z.string(),
  hasDocs: z.boolean(),
});
export type GitChameleonMetadata = z.infer<typeof GitChameleonMetadata>;
