/**
 * What the CoderEval suite knows of its tasks when it replays the platform's published verdicts
 * (README: "Replay" and "Known differences"): tasks invalid here (their samples are counted
 * apart, never compared), tasks whose test cannot fail (a pass says nothing: their published
 * verdicts are not sound), and the platform's own artifacts (known differences, named per sample,
 * each with its evidence in the README). benchgym does not copy the platform's flaws: these
 * only explain where its verdicts and the platform's part.
 */
import type { ScoredSubmission } from '../../src/replay/adapter.ts';
import type { ReplayCause, TaskApart } from '../../src/replay/causes.ts';
import type { Task } from '../../src/tasks/schema.ts';
import { ownValue } from '../../src/own.ts';

/** Why a task is not compared here, or why its published verdicts are not sound. */
export interface TaskStanding {
  /** invalid / unavailable: counted apart; cannot-fail: compared, but its published verdicts are not sound. */
  standing: 'invalid' | 'unavailable' | 'cannot-fail';
  reason: string;
}

const IMAGE_ONLY = "the test reads what only the platform's image had";

/**
 * Tasks by the platform's `_id` (the dataset's task id without its project). Every entry is what
 * `benchgym validate` finds here, with the reason the README's validation table gives.
 */
export const TASK_STANDING: Readonly<Record<string, TaskStanding>> = {
  // Files in no commit of the repository, paths or programs of the platform's image, its network.
  '6306091c73426c38ae68acdc': {
    standing: 'invalid',
    reason: `${IMAGE_ONLY}: infrared/core/utils/plugin.spec, in no commit of the repository (validate_from_content)`,
  },
  '6306091c73426c38ae68acdd': {
    standing: 'invalid',
    reason: `${IMAGE_ONLY}: infrared/core/utils/plugin.spec, in no commit of the repository (validate_from_file)`,
  },
  '6306092e73426c38ae68ad11': {
    standing: 'invalid',
    reason: `${IMAGE_ONLY}: some_var_file.yml in the platform's working directory (merge_extra_vars)`,
  },
  '6306093273426c38ae68ad15': {
    standing: 'invalid',
    reason: `${IMAGE_ONLY}: its interpreter, compared with '/usr/local/bin/python' (_run_playbook)`,
  },
  '6306298b52e177c0ba469fdc': {
    standing: 'invalid',
    reason: `${IMAGE_ONLY}: federation/entities/diaspora/pom.xml, in no commit of the repository (xml_children_as_dict)`,
  },
  '6306292652e177c0ba469f34': {
    standing: 'invalid',
    reason: 'the test makes a real HTTP request to github.com (the platform had a network; sandboxes have none) (fetch_content_type)',
  },
  '62b463163879012d194814a6': {
    standing: 'invalid',
    reason: `${IMAGE_ONLY}: HumanEval.zip in the project's root, in no commit of the repository (files_list_from_zipfile)`,
  },
  '62e4fb4d85ea9864308902e7': {
    standing: 'invalid',
    reason: `${IMAGE_ONLY}: its paths /usr/local/bin/python and /usr/bin/java (normalize_cmd)`,
  },
  '62b8b99de0d34b282c1811f8': {
    standing: 'invalid',
    reason: `${IMAGE_ONLY}: pysolbase/logging.yaml (the repository's is pysolbase_test/logging.yaml) (_reset_logging)`,
  },
  '62ece4982e6aefcf4aabbd74': {
    standing: 'invalid',
    reason: `${IMAGE_ONLY}: it changes into the platform's standalone/ folder for its dump.tar.gz (prepare_repository_from_archive)`,
  },
  '62b8b3d5eb7e40a82d2d1110': {
    standing: 'invalid',
    reason: "the test needs zope.interface's compiled C extension, an installed build (_c_optimizations_available)",
  },
  // Tests of another version of the project, or shadowed on the platform too.
  '62b438b566fea644fe22cc70': {
    standing: 'invalid',
    reason:
      'the test unpacks three parsers from arguments.make_parsers(), which ' +
      "returns two at the commit: a later version's test (bash_completion)",
  },
  '62b438a266fea644fe22cc2e': {
    standing: 'invalid',
    reason: "the test's check fails with the reference: its module copy is another version's (parse_arguments)",
  },
  '62b4567ad7d32e5b55cc83af': {
    standing: 'invalid',
    reason:
      "borgmatic/commands/borgmatic.py beside the test shadows the package ('borgmatic' is not a " +
      'package), on the platform too: every published sample fails (generate_config.parse_arguments)',
  },
  // Tests the untouched stub passes: every candidate that runs passes.
  '62e60ed4d76274f8a4026da0': { standing: 'cannot-fail', reason: 'the stub passes: the test never calls Record.keys (keys)' },
  '62e60723d76274f8a4026b75': {
    standing: 'cannot-fail',
    reason: 'the stub passes: the check that raises is commented out in the test (round_half_to_even)',
  },
  '6306292252e177c0ba469f11': { standing: 'cannot-fail', reason: 'the stub passes (format_dt)' },
  '62b8b59feb7e40a82d2d1291': {
    standing: 'cannot-fail',
    reason:
      'the stub passes: the test calls DeclarationTests._getTargetClass, not the target (Test_getObjectSpecification._getTargetClass)',
  },
  '63060b1b73426c38ae68ad43': {
    standing: 'cannot-fail',
    reason:
      "the stub passes: the test's register_spec calls api.InfraredPluginsSpec's " +
      'extend_cli, never the target (WorkspaceManagerSpec.extend_cli)',
  },
  '6305f9991d275c6667163c50': { standing: 'cannot-fail', reason: 'the stub passes (set_cut_chars)' },
  '62ece4992e6aefcf4aabbd7d': {
    standing: 'cannot-fail',
    reason: 'the stub passes: the check that raises is commented out in the test (subprocess_run_helper)',
  },
};

/** An artifact of the platform's own run that decides some published verdicts (README: "Known differences"). */
export interface KnownDifference {
  name: string;
  /** The tasks it touches, by `_id`. */
  tasks: readonly string[];
  /** The samples whose published verdict it decides: by their published verdict, and by ours when it shows only then. */
  when: { theirs?: 'passed' | 'failed'; ours?: 'passed' | 'failed' };
  /** What it is, in a line, and where the evidence is. */
  detail: string;
}

export const KNOWN_DIFFERENCES: readonly KnownDifference[] = [
  {
    name: 'zope-target-never-runs',
    tasks: ['62b8b59feb7e40a82d2d1291'],
    when: { theirs: 'failed' },
    detail:
      'the test calls DeclarationTests._getTargetClass, never the target, so no candidate can fail it; the platform failed ' +
      "every published sample (ChatGPT's 20, CodeGen Raw's 10), `pass` bodies included, which no placement under which its " +
      'reference passes gives (README, Known differences)',
  },
  {
    name: 'infrared-extend-cli-recorded-test',
    tasks: ['63060b1b73426c38ae68ad43'],
    when: { theirs: 'failed', ours: 'passed' },
    detail:
      'the platform ran the older test of tests/testcasesoriginal.txt: WorkspaceManagerSpec.extend_cli called on recorded ' +
      'inputs (data_passk_platform, only in its image), its result compared with the recorded None; the test here never runs ' +
      'the candidate (README, Known differences)',
  },
  {
    name: 'pysolbase-shared-log',
    tasks: ['62b8bbbfe0d34b282c181210', '62b8bbbfe0d34b282c18120f', '62b8bbbce0d34b282c18120d'],
    when: { theirs: 'failed', ours: 'passed' },
    detail:
      'the platform ran every sample in one working directory; these three tests log to ./pythonsol_unittest.log, and once a ' +
      'sample of append_text_to_file made that path a folder (os.makedirs) every later run failed with IsADirectoryError, ' +
      'whatever its code (README, Known differences)',
  },
];

const bareId = (taskId: string) => taskId.slice(taskId.lastIndexOf('/') + 1).split('+')[0]!;

/** The task's standing here, when the suite knows one. */
export function taskStanding(taskId: string): TaskStanding | undefined {
  return ownValue(TASK_STANDING, bareId(taskId));
}

/** A task invalid or unavailable here: its samples are counted apart (ReplayAdapter.apart). */
export function taskApart(task: Pick<Task, 'id'>): TaskApart | undefined {
  const s = taskStanding(task.id);
  return s && s.standing !== 'cannot-fail' ? { standing: s.standing, reason: s.reason } : undefined;
}

/** The known difference of the platform's that decides this sample's published verdict, if one does. */
export function knownDifferenceOf(taskId: string, ours: string, theirs: string | undefined): KnownDifference | undefined {
  const id = bareId(taskId);
  return KNOWN_DIFFERENCES.find(
    (d) => d.tasks.includes(id) && (!d.when.theirs || d.when.theirs === theirs) && (!d.when.ours || d.when.ours === ours),
  );
}

/**
 * The suite's cause of a sample (ReplayAdapter.explain): the platform's known difference that
 * decides its published verdict, else the task's test that cannot fail.
 */
export function explainSample(s: Pick<ScoredSubmission, 'task' | 'ours' | 'submission'>): ReplayCause | undefined {
  const known = knownDifferenceOf(s.task.id, s.ours, s.submission.published);
  if (known) return { kind: 'known-difference', name: known.name, detail: known.detail };
  const standing = taskStanding(s.task.id);
  if (standing?.standing === 'cannot-fail') return { kind: 'cannot-fail', detail: standing.reason };
  return undefined;
}
