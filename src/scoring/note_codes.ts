/**
 * Codes a verdict note may begin with (`CODE: what happened`), so that readers other than
 * people can tell why a verdict is what it is: the replay names a disagreement's cause from
 * them (src/replay/causes.ts). A scorer that knows one of these facts writes its note so.
 */
export const NOTE_CODES = {
  /** The candidate's patch did not apply to the start state. */
  patchNotApplied: 'PATCH_APPLY_FAILED',
  /** A test file of the candidate's (added or changed by its patch) does not compile: the build's test compilation failed on it. */
  testCompileFailed: 'TEST_COMPILE_FAILED',
  /** The task's tests pass on the untouched start state: they cannot fail, so a pass says nothing of the candidate. */
  cannotFail: 'CANNOT_FAIL',
} as const;

export type NoteCode = (typeof NOTE_CODES)[keyof typeof NOTE_CODES];

/** The first note that begins with `code` (`CODE:` or the code alone), if any. */
export function noteWithCode(notes: readonly string[], code: NoteCode): string | undefined {
  return notes.find((n) => n === code || n.startsWith(`${code}:`));
}
