import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { GymError, INFRA_CODES, toGymError } from '../errors.ts';
import { ownValue } from '../own.ts';
import { sandboxEnv } from '../env/types.ts';
import type { SandboxFactory } from '../sandbox/types.ts';
import { scorePatch, type ScoreOptions } from '../scoring/scorer.ts';
import type { ScoringMode } from '../scoring/mode.ts';
import type { Verdict } from '../scoring/verdict.ts';
import { readableDiff } from '../scoring/candidate_files.ts';
import { defaultDataDir, PROJECT_ROOT } from '../project.ts';
import { SuiteRegistry } from '../tasks/registry.ts';
import type { Task } from '../tasks/schema.ts';
import { seedOf } from '../tasks/seed.ts';
import { EPISODE_TOOLS, GYM_TOOLS } from '../tools/index.ts';
import type { AnyTool, EpisodeTool, ToolContext, ToolResult } from '../tools/types.ts';
import { parseInput } from '../validation.ts';
import { Episode } from './episode.ts';
import { withHeartbeat } from './heartbeat.ts';
import { contextFor, promptFor } from './prompt.ts';
import { Trajectory } from './trajectory.ts';
import { PathRedactor } from './redact.ts';

export interface GymOptions {
  registry?: SuiteRegistry;
  /** Persistent data: env caches, trajectories, scoring logs (default ~/.cache/benchgym or $BENCHGYM_HOME). */
  dataDir?: string;
  /** Env caches (venvs, Maven repository); defaults to `<dataDir>`: named `<cache>` in what the agent is shown. */
  cacheDir?: string;
  /** Where episodes and scorers run: a backend's factory (the CLI builds it from `--sandbox`, src/sandbox/backend.ts). */
  sandboxes: SandboxFactory;
  defaults?: Partial<EpisodeDefaults>;
  /** How submissions and `score()` are scored unless a call says otherwise (default strict; see src/scoring/mode.ts). */
  scoring?: ScoringMode;
}

/**
 * What a gym reports as its episodes go (`benchgym serve` logs these): a start (or fork), a
 * submission's verdict, a failed call (`infra`: the harness failed, not the agent), an end
 * without a submission. `episodeId` is null for a start that failed before the episode existed.
 */
export type GymEvent = { suite: string; taskId: string; at: string } & (
  | { type: 'episode_started'; episodeId: string; forkedFrom?: string }
  | { type: 'episode_submitted'; episodeId: string; verdict: Pick<Verdict, 'status' | 'reward' | 'tests' | 'error' | 'durationMs'> }
  | { type: 'episode_error'; episodeId: string | null; tool: string; infra: boolean; error: { code: string; message: string } }
  | { type: 'episode_ended'; episodeId: string; state: 'ended' | 'expired' }
);

export interface EpisodeDefaults {
  maxSteps: number;
  timeLimitMs: number;
  /** An episode with no call for this long is ended and its sandbox removed. */
  idleTtlMs: number;
  /** Ended episodes are remembered this long (their verdict and diff stay readable). */
  retainEndedMs: number;
  maxEpisodes: number;
}

export interface StartEpisodeRequest {
  suite: string;
  taskId: string;
  promptVariant?: string;
  /** A start state the task offers besides its own (`task.contexts`); default: the task's own. */
  context?: string;
  maxSteps?: number;
  timeLimitMs?: number;
}

const DEFAULTS: EpisodeDefaults = {
  maxSteps: 250,
  timeLimitMs: 2 * 60 * 60_000,
  idleTtlMs: 30 * 60_000,
  retainEndedMs: 60 * 60_000,
  maxEpisodes: 64,
};

/**
 * The service behind every protocol: starts episodes, dispatches tool calls with
 * validation, budgets and a trajectory, scores submissions, and cleans up.
 */
export class Gym {
  readonly registry: SuiteRegistry;
  readonly sandboxes: SandboxFactory;
  readonly dataDir: string;
  /** The scoring mode of submissions and of `score()` calls that name none. */
  readonly scoring: ScoringMode;
  readonly defaults: EpisodeDefaults;
  private readonly episodes = new Map<string, Episode>();
  private readonly sweeper: NodeJS.Timeout;
  /** What the agent sees of infrastructure errors: no server paths (the trajectory keeps them). */
  private readonly redactor: PathRedactor;
  private readonly listeners = new Set<(event: GymEvent) => void>();

  constructor(opts: GymOptions) {
    this.dataDir = path.resolve(opts.dataDir ?? defaultDataDir());
    this.scoring = opts.scoring ?? 'strict';
    this.registry = opts.registry ?? defaultRegistry();
    this.defaults = { ...DEFAULTS, ...opts.defaults };
    this.sandboxes = opts.sandboxes;
    this.redactor = new PathRedactor([
      ...(this.sandboxes.hostPaths ?? []),
      { root: path.resolve(opts.cacheDir ?? this.dataDir), placeholder: '<cache>' },
      { root: this.dataDir, placeholder: '<data>' },
      { root: PROJECT_ROOT, placeholder: '<benchgym>' },
      ...this.registry.privatePaths().map((root) => ({ root, placeholder: '<suite>' })),
    ]);
    this.sweeper = setInterval(() => void this.sweep(), Math.min(30_000, this.defaults.idleTtlMs)).unref();
  }

  /** Every tool this gym serves: the gym tools, the core episode tools and the served suites' own. */
  get tools(): AnyTool[] {
    const suiteTools = this.registry.servedSuites().flatMap((s) => s.tools ?? []);
    return [...GYM_TOOLS, ...EPISODE_TOOLS, ...suiteTools.filter((t, i) => suiteTools.findIndex((u) => u.name === t.name) === i)];
  }

  /** The tools one episode offers: the core episode tools and those of its suite's that apply to its task. */
  episodeTools(episode: Pick<Episode, 'task'>): EpisodeTool[] {
    return [...EPISODE_TOOLS, ...this.registry.toolsOf(episode.task.suite).filter((t) => t.appliesTo?.(episode.task) ?? true)];
  }

  /** Calls `listener` with every GymEvent from now on; returns the function that stops it. A listener that throws is ignored. */
  onEvent(listener: (event: GymEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(event: GymEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // A listener's failure is not the episode's.
      }
    }
  }

  private emitError(episodeId: string | null, task: { suite: string; id: string }, tool: string, e: GymError): void {
    const infra = INFRA_CODES.has(e.code) || Boolean(e.details?.sandboxLost);
    this.emit({
      type: 'episode_error',
      episodeId,
      suite: task.suite,
      taskId: task.id,
      at: new Date().toISOString(),
      tool,
      infra,
      error: { code: e.code, message: this.redactor.redact(e.message) },
    });
  }

  async startEpisode(req: StartEpisodeRequest, ctx?: Pick<ToolContext, 'progress' | 'signal'>): Promise<Episode> {
    try {
      const episode = await this.openEpisode(req, ctx);
      this.emit({
        type: 'episode_started',
        episodeId: episode.id,
        suite: episode.task.suite,
        taskId: episode.task.id,
        at: new Date().toISOString(),
      });
      return episode;
    } catch (err) {
      this.emitError(null, { suite: req.suite, id: req.taskId }, 'start_episode', toGymError(err));
      throw err;
    }
  }

  private async openEpisode(req: StartEpisodeRequest, ctx?: Pick<ToolContext, 'progress' | 'signal'>): Promise<Episode> {
    this.assertCapacity();
    const task = await this.registry.task(req.suite, req.taskId);
    const context = contextFor(task, req.context);
    const prompt = promptFor(task, req.promptVariant, context.name);
    ctx?.progress(0, 3, 'preparing the environment');
    // The Docker backend bakes the start state into an instance image: a context's own.
    const env = await this.sandboxes.prepare(context.workspace ? { ...task, workspace: context.workspace } : task);
    ctx?.progress(1, 3, 'laying out the workspace');
    const id = `ep-${randomBytes(8).toString('hex')}`;
    const sandbox = await this.sandboxes.create({
      seed: seedOf(context.workspace ? { ...task, workspace: context.workspace } : task, env),
      env: sandboxEnv(env),
      labels: { 'benchgym.episode': id, 'benchgym.task': task.id },
    });
    try {
      for (const [rel, content] of Object.entries(task.tests.visible?.files ?? {})) await sandbox.writeFile(rel, content);
      await sandbox.commitBaseline();
      const trajectory = await Trajectory.open(path.join(this.dataDir, 'trajectories'), id, {
        suite: task.suite,
        taskId: task.id,
        promptVariant: req.promptVariant ?? 'default',
        context: context.name,
        sandbox: sandbox.backend,
        // The problem statement as the agent got it: an exported trajectory (ATIF) is whole without the suite.
        prompt,
      });
      const episode = new Episode(
        id,
        task,
        sandbox,
        env,
        { maxSteps: req.maxSteps ?? this.defaults.maxSteps, deadline: Date.now() + (req.timeLimitMs ?? this.defaults.timeLimitMs) },
        trajectory,
        prompt,
        this.lifecycle,
      );
      episode.context = context.name;
      this.episodes.set(id, episode);
      if (ctx?.signal?.aborted) {
        // The client gave up while the env was built: nothing should be left waiting.
        await this.endEpisode(episode);
        this.episodes.delete(id);
        throw new GymError('CANCELLED', 'start_episode was cancelled');
      }
      ctx?.progress(3, 3, 'ready');
      return episode;
    } catch (err) {
      await sandbox.destroy().catch(() => {});
      throw err;
    }
  }

  private get lifecycle() {
    return {
      submit: async (ep: Episode, c: Pick<ToolContext, 'signal' | 'progress'>) => this.redactedVerdict(ep, await this.submit(ep, c)),
      end: (ep: Episode) => this.endEpisode(ep),
      fork: (ep: Episode) => this.forkEpisode(ep),
    };
  }

  /** A copy of a running episode: same task, workspace, edit history and budgets left; its own trajectory. */
  async forkEpisode(source: Episode): Promise<Episode> {
    if (source.state !== 'running') throw new GymError('EPISODE_ENDED', `episode ${source.id} is ${source.state}`);
    if (!source.sandbox.fork) throw new GymError('INVALID_ARGUMENT', `the ${source.sandbox.backend} sandbox cannot fork episodes`);
    this.assertCapacity();
    const sandbox = await source.sandbox.fork();
    try {
      const id = `ep-${randomBytes(8).toString('hex')}`;
      const trajectory = await Trajectory.open(path.join(this.dataDir, 'trajectories'), id, {
        suite: source.task.suite,
        taskId: source.task.id,
        forkedFrom: source.id,
        atStep: source.steps,
        context: source.context,
        sandbox: sandbox.backend,
        prompt: source.prompt,
      });
      const episode = new Episode(id, source.task, sandbox, source.env, { ...source.budgets }, trajectory, source.prompt, this.lifecycle);
      episode.steps = source.steps;
      episode.context = source.context;
      for (const [file, stack] of source.editHistory) episode.editHistory.set(file, [...stack]);
      episode.lastTestRun = source.lastTestRun;
      this.episodes.set(id, episode);
      this.emit({
        type: 'episode_started',
        episodeId: id,
        suite: source.task.suite,
        taskId: source.task.id,
        at: new Date().toISOString(),
        forkedFrom: source.id,
      });
      return episode;
    } catch (err) {
      await sandbox.destroy().catch(() => {});
      throw err;
    }
  }

  private assertCapacity(): void {
    const live = [...this.episodes.values()].filter((e) => e.state === 'running').length;
    if (live >= this.defaults.maxEpisodes) {
      throw new GymError(
        'CAPACITY',
        `${live} episodes are running, the most this server allows (${this.defaults.maxEpisodes}); end one first`,
      );
    }
  }

  /** The episode with this id, or undefined (no error is built: a capability check costs the same either way). */
  findEpisode(id: string): Episode | undefined {
    return this.episodes.get(id);
  }

  episode(id: string): Episode {
    const episode = this.episodes.get(id);
    if (!episode) throw new GymError('EPISODE_NOT_FOUND', `no episode '${id}' (it may have expired; start a new one with start_episode)`);
    return episode;
  }

  /** Validates and runs any tool by name; episode tools need `episodeId`. */
  async callTool(name: string, rawArgs: unknown, ctx: ToolContext, episodeId?: string): Promise<ToolResult> {
    // The core tools come first in `tools` (they win a name clash): found without building the list, as every step asks.
    const tool = CORE_TOOLS.get(name) ?? this.tools.find((t) => t.name === name);
    if (!tool) throw new GymError('INVALID_ARGUMENT', `unknown tool '${name}'`);
    if (tool.scope === 'gym') {
      try {
        return await withHeartbeat(ctx, name, (c) => tool.run(this, parseInput(tool.input, rawArgs, `arguments for ${name}`), c));
      } catch (err) {
        throw this.redactor.error(toGymError(err));
      }
    }
    if (!episodeId) throw new GymError('INVALID_ARGUMENT', `'episode_id' is required for ${name}`);
    const episode = this.episode(episodeId);
    if (CORE_TOOLS.get(name) === tool) return this.callEpisodeTool(episode, tool, rawArgs, ctx);
    const offered = this.episodeTools(episode);
    // A suite's tool is served gym-wide (the union), but only its suite's episodes offer it.
    const own = offered.find((t) => t.name === name);
    if (!own)
      throw new GymError(
        'TOOL_NOT_AVAILABLE',
        `'${name}' is not a tool of suite '${episode.task.suite}' episodes (its own tools: ${
          offered
            .slice(EPISODE_TOOLS.length)
            .map((t) => t.name)
            .join(', ') || 'none'
        })`,
      );
    return this.callEpisodeTool(episode, own, rawArgs, ctx);
  }

  async callEpisodeTool(episode: Episode, tool: EpisodeTool, rawArgs: unknown, ctx: ToolContext): Promise<ToolResult> {
    return episode.serialize(async () => {
      const startedAt = new Date();
      const step = ++episode.steps;
      episode.lastActiveAt = Date.now();
      try {
        const args = parseInput(tool.input, rawArgs, `arguments for ${tool.name}`);
        if (episode.state !== 'running' && !tool.allowedAfterEnd) {
          throw new GymError('EPISODE_ENDED', `episode ${episode.id} is ${episode.state}; only get_diff and the verdict remain available`);
        }
        if (!tool.exemptFromBudget) {
          if (step > episode.budgets.maxSteps)
            throw new GymError('BUDGET_EXHAUSTED', `the step budget (${episode.budgets.maxSteps}) is spent; call submit`);
          if (Date.now() > episode.budgets.deadline) throw new GymError('BUDGET_EXHAUSTED', 'the time budget is spent; call submit');
        }
        if (tool.runsCode) episode.codeRan = true;
        const result = await withHeartbeat(ctx, tool.name, (c) => tool.run(episode, args, c));
        episode.trajectory.append({
          type: 'step',
          step,
          tool: tool.name,
          args,
          ok: true,
          observation: result.text,
          startedAt: startedAt.toISOString(),
          durationMs: Date.now() - startedAt.getTime(),
        });
        // An ended episode keeps no file open while it is remembered (retainEndedMs): a later record opens it again.
        if (episode.state !== 'running') await episode.trajectory.flush();
        return result;
      } catch (err) {
        const e = sandboxFailureOf(episode, tool.name, step, toGymError(err));
        episode.trajectory.append({
          type: 'step',
          step,
          tool: tool.name,
          args: rawArgs,
          ok: false,
          error: e.toJSON(),
          startedAt: startedAt.toISOString(),
          durationMs: Date.now() - startedAt.getTime(),
        });
        this.emitError(episode.id, episode.task, tool.name, e);
        if (e.details?.sandboxLost && episode.state === 'running') {
          // The sandbox died under the episode (OOM, docker kill): an infrastructure failure,
          // recorded as such; the episode ends rather than lingering until its TTL.
          episode.state = 'ended';
          episode.trajectory.append({ type: 'end', state: 'ended', infraError: e.toJSON(), at: new Date().toISOString() });
          await this.release(episode);
        }
        throw this.redactor.error(e, [episode.sandbox.workdir]);
      } finally {
        episode.lastActiveAt = Date.now();
      }
    });
  }

  /** The verdict as the submit tool shows it: its infrastructure error and notes without server paths. */
  private redactedVerdict(episode: Episode, v: Verdict): Verdict {
    const keep = [episode.sandbox.workdir];
    return {
      ...v,
      notes: v.notes.map((n) => this.redactor.redact(n, keep)),
      ...(v.error ? { error: { ...v.error, message: this.redactor.redact(v.error.message, keep) } } : {}),
    };
  }

  /** Scores the episode's diff in a fresh sandbox (in the gym's scoring mode unless told) and ends the episode. */
  async submit(episode: Episode, ctx: Pick<ToolContext, 'signal' | 'progress'>, opts: { scoring?: ScoringMode } = {}): Promise<Verdict> {
    if (episode.verdict) return episode.verdict;
    const { diff, notes } = await readableDiff(episode.sandbox);
    episode.finalDiff = diff;
    const scored = await this.submissionFor(episode, diff);
    const verdict = await this.score(scored.task, scored.patch, {
      signal: ctx.signal,
      progress: (m) => ctx.progress(0, undefined, m),
      ...(opts.scoring ? { scoring: opts.scoring } : {}),
    });
    verdict.notes.push(...notes);
    if (scored.note) verdict.notes.push(scored.note);
    episode.verdict = verdict;
    episode.state = 'submitted';
    episode.trajectory.append({ type: 'verdict', verdict, diff });
    await this.release(episode);
    const { status, reward, tests, error, durationMs } = verdict;
    this.emit({
      type: 'episode_submitted',
      episodeId: episode.id,
      suite: episode.task.suite,
      taskId: episode.task.id,
      at: new Date().toISOString(),
      verdict: {
        status,
        reward,
        tests,
        durationMs,
        ...(error ? { error: { ...error, message: this.redactor.redact(error.message) } } : {}),
      },
    });
    return verdict;
  }

  /**
   * What an episode's work is scored as. In the task's own start state: its diff. In another
   * context: the suite maps the work onto the task's start state (Suite.contextPatch: carrying
   * the target function over, say); a suite without that mapping scores the diff against the
   * context's own start state.
   */
  private async submissionFor(episode: Episode, diff: string): Promise<{ task: Task; patch: string; note?: string }> {
    const { task } = episode;
    if (episode.context === task.defaultContext) return { task, patch: diff };
    const mapped = await this.registry.contextPatch(task, episode.context, {
      diff,
      read: (rel) =>
        episode.sandbox
          .readFile(rel)
          .then((b) => b.toString('utf8'))
          .catch(() => null),
    });
    if (mapped) return { task, patch: mapped.patch, note: mapped.note };
    return { task: { ...task, workspace: ownValue(task.contexts, episode.context)!.workspace }, patch: diff };
  }

  score(task: Task, patch: string, opts: ScoreOptions = {}): Promise<Verdict> {
    const deps = { sandboxes: this.sandboxes, logDir: path.join(this.dataDir, 'logs') };
    const suiteScorer = this.registry.scorerOf(task.suite);
    const o = { ...opts, scoring: opts.scoring ?? this.scoring };
    return suiteScorer ? suiteScorer(task, patch, deps, o) : scorePatch(task, patch, deps, o);
  }

  async endEpisode(episode: Episode, state: 'ended' | 'expired' = 'ended'): Promise<void> {
    if (episode.state === 'running') {
      episode.finalDiff ??= await episode.sandbox.diff().catch(() => undefined);
      episode.state = state;
      episode.trajectory.append({ type: 'end', state, at: new Date().toISOString() });
      this.emit({
        type: 'episode_ended',
        episodeId: episode.id,
        suite: episode.task.suite,
        taskId: episode.task.id,
        at: new Date().toISOString(),
        state,
      });
    }
    await this.release(episode);
  }

  private async release(episode: Episode): Promise<void> {
    await episode.sandbox.destroy().catch(() => {});
    await episode.trajectory.flush();
  }

  listEpisodes(): Episode[] {
    return [...this.episodes.values()];
  }

  private async sweep(): Promise<void> {
    const now = Date.now();
    for (const episode of this.episodes.values()) {
      if (episode.state === 'running' && now - episode.lastActiveAt > this.defaults.idleTtlMs) {
        await this.endEpisode(episode, 'expired').catch(() => {});
      } else if (episode.state !== 'running' && now - episode.lastActiveAt > this.defaults.retainEndedMs) {
        this.episodes.delete(episode.id);
        await episode.trajectory.flush();
      }
    }
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    await Promise.all([...this.episodes.values()].map((e) => this.endEpisode(e).catch(() => {})));
    await this.sandboxes.close();
  }
}

/**
 * A sandbox failure once the agent's code could run there (Episode.codeRan) may be the agent's
 * doing (a command that killed the executor, a workspace that breaks the diff): the episode keeps
 * the first one, and the error says so (`details.afterAgentCode`) for clients that keep count.
 */
function sandboxFailureOf(episode: Episode, tool: string, step: number, e: GymError): GymError {
  if (e.code !== 'SANDBOX_UNAVAILABLE' || !episode.codeRan) return e;
  episode.sandboxFailure ??= { code: e.code, message: e.message, tool, step };
  return new GymError(e.code, e.message, { ...e.details, afterAgentCode: true });
}

/** The core's tools by name: every episode offers the episode ones. */
const CORE_TOOLS: ReadonlyMap<string, AnyTool> = new Map<string, AnyTool>([...GYM_TOOLS, ...EPISODE_TOOLS].map((t) => [t.name, t]));

/** Whether `name` is an episode tool of this gym (a core one, or a served suite's), without building the tool list. */
export function isEpisodeToolOf(gym: Gym, name: string): boolean {
  const core = CORE_TOOLS.get(name);
  return core ? core.scope === 'episode' : gym.tools.some((t) => t.scope === 'episode' && t.name === name);
}

/** With no registry given, a gym serves no suite (the composition root, bin/builtins.ts, knows the built-in ones). */
export function defaultRegistry(): SuiteRegistry {
  return new SuiteRegistry([]);
}
