import type { EpisodeSession } from '../agent/session.ts';
import type { Agent, ModelConfig } from '../agent/types.ts';
import type { Gym } from '../episode/gym.ts';
import type { Task } from '../tasks/schema.ts';
import type { ProgressSink } from './progress.ts';
import type { RemoteServer } from './remote.ts';

/** The agent a run measures: its registry name and a fresh Agent per episode. */
export interface AgentUnderTest {
  name: string;
  /** Called once per episode; options may depend on the task (the replay agent's gold files). */
  create(task: Task, context?: string): Agent;
}

/** What `runExperiment` runs, and how. */
export interface RunExperimentOptions {
  gym: Gym;
  /** The run directory: run.json, results.jsonl, trajectories/. */
  outDir: string;
  suite: string;
  agent: AgentUnderTest;
  model: ModelConfig;
  /** Samples per task (pass@k draws several); default 1. */
  samples?: number;
  /** Task ids to run (default: every task of the suite), in the suite's order. */
  tasks?: string[];
  /** Episodes at once; default 1. */
  concurrency?: number;
  maxSteps?: number;
  timeLimitMs?: number;
  /**
   * The start state every episode asks for (`start_episode {context}`, a key of the tasks' `contexts`); recorded in each result's metadata.
   */
  context?: string;
  /** The prompt variant every episode asks for (a key of the tasks' `promptVariants`); recorded in each result's metadata. */
  promptVariant?: string;
  /** Retries of an infrastructure failure (wrong answers are never retried); default 2. */
  retries?: number;
  /** Wait before retry number `attempt - 1`; default 5 s times the attempt number. */
  retryDelayMs?: (attempt: number) => number;
  /** Continue the run in outDir: skip (task, sample) pairs that have a final result. */
  resume?: boolean;
  /** With resume: run again the pairs whose final result is an infrastructure failure. */
  rerunErrors?: boolean;
  /** At most this many tasks (after `tasks`, `context` and `shuffle`); kept in run.json. */
  limit?: number;
  /** Orders the tasks by this seed before `limit` (reproducible; see selection.ts); kept in run.json. */
  shuffle?: string;
  /** More options that decide what the run measures (agent options, --gold, sandbox, dataset): kept in run.json, compared on resume. */
  options?: Record<string, unknown>;
  progress?: ProgressSink;
  /** Aborting stops the run: episodes in flight are cancelled and not written (a resume runs them again). */
  signal?: AbortSignal;
  /**
   * Run the episodes on a benchgym server (or the Service in front of its replicas) instead of in
   * `gym`, which then only selects the tasks (the server must serve the same suite). Each episode
   * is driven on the replica that started it (start_episode's mcpUrl); a replica that stops
   * answering makes its episodes infrastructure failures, retried like any other.
   */
  server?: RemoteServer;
  /** How the agent's MCP client reaches an episode of `gym` (default: in-process, src/agent/session.ts); not with `server`. */
  connect?: (gym: Gym, episodeId: string) => Promise<EpisodeSession>;
  /**
   * How long an agent may overrun the episode's time limit before its signal is aborted (default
   * 5 min); one that still does not return (at most 30 s later) is abandoned. Either way the
   * pair is an AGENT_TIMEOUT infrastructure failure, not retried.
   */
  agentGraceMs?: number;
}
