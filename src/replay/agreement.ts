/**
 * Agreement with the published verdicts, as every replay's summary tells it: as measured (every
 * sample both sides decided), and over the samples whose published verdict is sound (no known
 * difference of the original harness, tests that can fail); the disagreements by cause; and the
 * samples counted apart (their task invalid or unavailable here), never compared.
 */
import { CAUSE_KINDS, CAUSE_TITLES, publishedIsSound, type CauseKind, type ReplayCause, type TaskApart } from './causes.ts';

/** What a suite's result of one sample must carry for the agreement figures. */
export interface ComparedResult {
  taskId: string;
  ours: string;
  theirs?: 'passed' | 'failed';
  /** Set when both sides decided and the sample is not counted apart. */
  agree?: boolean;
  cause?: ReplayCause;
  apart?: TaskApart;
}

export interface ApartTask {
  taskId: string;
  standing: TaskApart['standing'];
  reason: string;
  samples: number;
  /** Of its samples, those ours passed, and those published as passed. */
  ourPassed: number;
  theirPassed: number;
}

export interface AgreementFigures {
  /** Samples both sides decided (those counted apart are not compared), and how many agree. */
  compared: number;
  agreed: number;
  agreement: number | null;
  /** The same over the compared samples whose published verdict is sound. */
  soundCompared: number;
  soundAgreed: number;
  soundAgreement: number | null;
  /** Compared samples whose published verdict is not sound, by cause kind. */
  unsound: Partial<Record<CauseKind, number>>;
  /** Disagreements, and how many each cause explains. */
  disagreements: number;
  causes: Partial<Record<CauseKind, number>>;
  /** Samples counted apart, and their tasks with the reason. */
  apart: number;
  apartTasks: ApartTask[];
}

const tally = (into: Partial<Record<CauseKind, number>>, kind: CauseKind) => void (into[kind] = (into[kind] ?? 0) + 1);

export function agreementFigures(results: ComparedResult[]): AgreementFigures {
  const compared = results.filter((r) => r.agree !== undefined && !r.apart);
  const sound = compared.filter((r) => publishedIsSound(r.cause));
  const unsound: Partial<Record<CauseKind, number>> = {};
  for (const r of compared) if (!publishedIsSound(r.cause)) tally(unsound, r.cause!.kind);
  const disagreeing = compared.filter((r) => r.agree === false);
  const causes: Partial<Record<CauseKind, number>> = {};
  for (const r of disagreeing) tally(causes, r.cause?.kind ?? 'unexplained');
  const apartTasks = new Map<string, ApartTask>();
  for (const r of results.filter((x) => x.apart)) {
    const t = apartTasks.get(r.taskId) ?? {
      taskId: r.taskId,
      standing: r.apart!.standing,
      reason: r.apart!.reason,
      samples: 0,
      ourPassed: 0,
      theirPassed: 0,
    };
    t.samples++;
    if (r.ours === 'passed') t.ourPassed++;
    if (r.theirs === 'passed') t.theirPassed++;
    apartTasks.set(r.taskId, t);
  }
  const agreed = compared.filter((r) => r.agree).length;
  const soundAgreed = sound.filter((r) => r.agree).length;
  return {
    compared: compared.length,
    agreed,
    agreement: compared.length ? agreed / compared.length : null,
    soundCompared: sound.length,
    soundAgreed,
    soundAgreement: sound.length ? soundAgreed / sound.length : null,
    unsound,
    disagreements: disagreeing.length,
    causes,
    apart: results.filter((x) => x.apart).length,
    apartTasks: [...apartTasks.values()],
  };
}

const pct = (n: number, d: number) => (d ? `${((100 * n) / d).toFixed(1)}%` : 'n/a');
const byKind = (counts: Partial<Record<CauseKind, number>>) =>
  CAUSE_KINDS.filter((k) => counts[k])
    .map((k) => `${CAUSE_TITLES[k]} ${counts[k]}`)
    .join(', ');

export interface AgreementWords<R> {
  /** What is compared with (`the published verdicts`, `the published is_pass`). */
  what: string;
  /** Appended to the agreement line (`; published 9 passed, ours 10 on the same rows`). */
  extra?: string;
  /** A disagreement's line, without its cause (`  DISAGREE id #1 (line 3): ours failed, theirs passed: reason`). */
  disagreement(r: R): string;
}

/** One line per disagreement cause's name: `known difference 'zope-target-never-runs' (20): detail`. */
function causeHeading(kind: CauseKind, name: string | undefined, count: number, detail: string | undefined): string {
  const what = name ? `${CAUSE_TITLES[kind]}: ${name}` : CAUSE_TITLES[kind];
  return ` ${what} (${count})${detail ? `: ${detail}` : ''}`;
}

/**
 * The report's agreement section: both figures, every disagreement under its cause (grouped by
 * the cause's name, whose detail is said once when every sample shares it), and the tasks
 * counted apart with their reason.
 */
export function formatAgreement<R extends ComparedResult>(results: R[], f: AgreementFigures, words: AgreementWords<R>): string[] {
  const out: string[] = [];
  if (f.compared) {
    const left = f.compared - f.soundCompared;
    const soundPart = left
      ? `; ${f.soundAgreed}/${f.soundCompared} (${pct(f.soundAgreed, f.soundCompared)}) over ` +
        `the ${f.soundCompared} whose published verdict is sound (${left} left out: ${byKind(f.unsound)})`
      : '; every published verdict compared is sound';
    out.push(
      `agreement with ${words.what}: ${f.agreed}/${f.compared} (${pct(f.agreed, f.compared)}) as measured${soundPart}${words.extra ?? ''}`,
    );
  }
  if (f.disagreements) {
    out.push(`disagreements: ${f.disagreements}, by cause: ${byKind(f.causes)}`);
    const disagreeing = results.filter((r) => r.agree === false && !r.apart);
    for (const kind of CAUSE_KINDS) {
      const ofKind = disagreeing.filter((r) => (r.cause?.kind ?? 'unexplained') === kind);
      const names = [...new Set(ofKind.map((r) => r.cause?.name))];
      for (const name of names) {
        const group = ofKind.filter((r) => r.cause?.name === name);
        const details = new Set(group.map((r) => r.cause?.detail));
        const shared = details.size === 1 && kind !== 'unexplained' ? [...details][0] : undefined;
        out.push(causeHeading(kind, name, group.length, shared));
        for (const r of group)
          out.push(`${words.disagreement(r)}${shared || kind === 'unexplained' || !r.cause ? '' : ` [${r.cause.detail}]`}`);
      }
    }
  }
  const apartCount = f.apartTasks.length;
  if (apartCount) {
    out.push(
      `counted apart, never compared (the task is invalid or unavailable here): ${f.apart} ` +
        `sample${f.apart === 1 ? '' : 's'} of ${apartCount} task${apartCount === 1 ? '' : 's'}`,
    );
    for (const t of f.apartTasks) {
      out.push(
        `  ${t.standing === 'invalid' ? 'INVALID HERE' : 'UNAVAILABLE'} ${t.taskId} (${t.samples} ` +
          `sample${t.samples === 1 ? '' : 's'}; ours ${t.ourPassed} passed, published ${t.theirPassed} passed): ${t.reason}`,
      );
    }
  }
  return out;
}
