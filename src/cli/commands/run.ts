import path from 'node:path';
import { checkModelEndpoint, configuredBaseURL } from '../../agent/endpoint.ts';
import { GymError } from '../../errors.ts';
import { agentUnderTest, goldOptions } from '../../runner/agents.ts';
import { readManifest } from '../../runner/manifest.ts';
import { passCountsOf, passRateLine } from '../../runner/pass_rate.ts';
import { streamProgress } from '../../runner/progress.ts';
import { runExperiment } from '../../runner/runner.ts';
import { scoringFlag } from '../../scoring/mode.ts';
import type { CliCommand } from '../command.ts';
import type { Composition } from '../composition.ts';
import { gymFlags, gymFlagsUsage, gymFrom } from '../gym_options.ts';
import { intFlag, listFlag, numberFlag, parseFlags } from '../options.ts';
import { ownValue } from '../../own.ts';

const usage = (root: Composition) => `benchgym run: an agent over a suite, each (task, sample) an episode scored in a fresh sandbox:
DIR/run.json, DIR/results.jsonl, DIR/trajectories/ (--resume continues DIR; options left out come from its run.json)
Exit 1 when an episode failed on infrastructure, 130 when interrupted.

Usage:
  benchgym run --suite ID[=PATH] [--dataset PATH] --agent NAME --model M [--base-url URL] --out DIR
               [--samples n] [--temperature t] [--concurrency c] [--tasks a,b] [--max-steps N]
               [--time-limit S] [--max-tokens N] [--pricing IN,OUT] [--retries N] [--agent-options JSON]
               [--gold] [--resume [--rerun-errors]] [--limit N] [--shuffle SEED] [--sandbox local|docker]
               [--context NAME] [--prompt-variant NAME] [--server URL] [--exclude-errors]

Options:
  --agent NAME       the agent: ${root.agents.names.join(', ')}
  --model M          the model it calls
  --base-url URL     its OpenAI-compatible endpoint (default $OPENAI_BASE_URL; no public default), checked
                     once before any episode; key in $OPENAI_API_KEY or $BENCHGYM_API_KEY
  --out DIR          the run directory
  --samples n        samples per task (default 1); --temperature t, --max-tokens N: the model's settings
  --concurrency c    episodes at once (default 2); --retries N: attempts after an infrastructure failure (default 2)
  --tasks a,b        only these task ids; --context NAME: another start state of the tasks
  --limit N          at most N tasks (the first N, or with --shuffle the first N of the seeded order)
  --shuffle SEED     a reproducible order of the tasks from SEED (any string; the same on --resume)
  --max-steps N, --time-limit S
                     an episode's step and time limits (default: the agent's and the task's)
  --pricing IN,OUT   USD per 1M prompt and completion tokens, for the cost figures
  --agent-options J  a JSON object of the agent's own options; --prompt-variant NAME: another prompt
  --gold             the reference solution as the agent's answer (checks the pipeline end to end)
  --resume           continue DIR: the (task, sample) pairs it lacks
  --rerun-errors     with --resume: run again the pairs whose result is an infrastructure failure
                     (the earlier attempt stays in results.jsonl and the trajectory)
  --server URL       run the episodes on a benchgym server serving the same suite (or the Service in front
                     of its replicas: each episode is driven on the replica that started it, a replica that
                     dies makes its episodes infrastructure failures, retried); --server-token T or $BENCHGYM_TOKEN
  --exclude-errors   the summary's first figure over the scored samples only (by default a sample that ended
                     in an infrastructure failure is one that did not pass; both figures are printed)
${gymFlagsUsage(root)}

Example:
  benchgym run --suite examples --agent swe-agent --model qwen2.5-coder --base-url http://127.0.0.1:8000/v1 --out runs/first --samples 2
`;

/** An option given on the command line wins; on --resume one left out comes from run.json; else the default. */
function pick<T>(given: T | undefined, previous: T | null | undefined, fallback: T): T {
  if (given !== undefined) return given;
  if (previous !== undefined && previous !== null) return previous;
  return fallback;
}

export function runCommand(root: Composition): CliCommand {
  return {
    name: 'run',
    summary: 'an agent over a suite: DIR/run.json, DIR/results.jsonl, DIR/trajectories/',
    get usage() {
      return usage(root);
    },
    async run(args) {
      const { values } = parseFlags(args, {
        ...gymFlags(root),
        dataset: { type: 'string' },
        agent: { type: 'string' },
        model: { type: 'string' },
        'base-url': { type: 'string' },
        samples: { type: 'string' },
        temperature: { type: 'string' },
        concurrency: { type: 'string' },
        tasks: { type: 'string' },
        'max-steps': { type: 'string' },
        'time-limit': { type: 'string' },
        'max-tokens': { type: 'string' },
        pricing: { type: 'string' },
        retries: { type: 'string' },
        'agent-options': { type: 'string' },
        gold: { type: 'boolean' },
        out: { type: 'string' },
        resume: { type: 'boolean' },
        'rerun-errors': { type: 'boolean' },
        limit: { type: 'string' },
        shuffle: { type: 'string' },
        context: { type: 'string' },
        'prompt-variant': { type: 'string' },
        server: { type: 'string' },
        'server-token': { type: 'string' },
        'exclude-errors': { type: 'boolean' },
      });
      if (!values.out) throw new GymError('INVALID_ARGUMENT', 'missing --out DIR (the run directory)');
      const outDir = path.resolve(values.out);
      if (values['rerun-errors'] && !values.resume)
        throw new GymError('INVALID_ARGUMENT', '--rerun-errors retries the infrastructure failures of an earlier run: add --resume');
      const previous = values.resume ? await readManifest(outDir) : undefined;
      const prev = previous?.options;

      const suiteSpec = values.suite?.[0];
      const suite = suiteSpec?.split('=')[0] ?? previous?.suite;
      if (!suite) throw new GymError('INVALID_ARGUMENT', 'missing --suite (e.g. --suite examples)');
      const givenDataset = values.dataset ?? (suiteSpec?.includes('=') ? suiteSpec.slice(suiteSpec.indexOf('=') + 1) : undefined);
      const dataset = pick(
        givenDataset !== undefined ? path.resolve(givenDataset) : undefined,
        prev?.dataset as string | null | undefined,
        null,
      );
      const agentName = values.agent ?? previous?.agent;
      if (!agentName) throw new GymError('INVALID_ARGUMENT', 'missing --agent NAME (e.g. --agent swe-agent)');
      const model = values.model ?? previous?.model ?? (agentName === 'replay' ? 'none' : undefined);
      if (!model) throw new GymError('INVALID_ARGUMENT', `missing --model (the model name the '${agentName}' agent calls)`);
      let givenAgentOptions: Record<string, unknown> | undefined;
      if (values['agent-options'] !== undefined) {
        try {
          givenAgentOptions = JSON.parse(values['agent-options']) as Record<string, unknown>;
        } catch (err) {
          throw new GymError('INVALID_ARGUMENT', `invalid --agent-options: ${(err as Error).message} (a JSON object)`);
        }
        if (!givenAgentOptions || typeof givenAgentOptions !== 'object' || Array.isArray(givenAgentOptions))
          throw new GymError('INVALID_ARGUMENT', 'invalid --agent-options: a JSON object');
      }
      const agentOptions = pick(givenAgentOptions, prev?.agentOptions as Record<string, unknown> | undefined, {});
      const gold = pick(values.gold, prev?.gold as boolean | undefined, false);
      const sandbox = pick(values.sandbox, prev?.sandbox as string | undefined, 'local');
      // A run recorded before scoring modes existed was scored as faithful is now; it resumes so.
      const legacyRun = prev !== undefined && prev !== null && !('scoring' in prev);
      const scoring = legacyRun
        ? scoringFlag(values.scoring, 'faithful')
        : scoringFlag(values.scoring ?? (prev?.scoring as string | undefined), 'strict');
      const samples = pick(values.samples !== undefined ? intFlag(values.samples, 'samples', 1, 1, 1000) : undefined, prev?.samples, 1);
      const temperature = pick(numberFlag(values.temperature, 'temperature', 0, 2), prev?.temperature, null);
      const maxSteps = pick(
        values['max-steps'] !== undefined ? intFlag(values['max-steps'], 'max-steps', 250, 1, 100_000) : undefined,
        prev?.maxSteps,
        null,
      );
      const timeLimitMs = pick(
        values['time-limit'] !== undefined ? intFlag(values['time-limit'], 'time-limit', 7200, 1, 7 * 24 * 3600) * 1000 : undefined,
        prev?.timeLimitMs,
        null,
      );
      const maxTokens = pick(
        values['max-tokens'] !== undefined ? intFlag(values['max-tokens'], 'max-tokens', 4096, 1, 10_000_000) : undefined,
        prev?.maxTokens,
        null,
      );
      let givenPricing: { prompt: number; completion: number } | undefined;
      if (values.pricing !== undefined) {
        const [a, b] = values.pricing.split(',');
        const promptPrice = numberFlag(a, 'pricing', 0, 1e6);
        const completionPrice = numberFlag(b, 'pricing', 0, 1e6);
        if (promptPrice === undefined || completionPrice === undefined)
          throw new GymError(
            'INVALID_ARGUMENT',
            `invalid --pricing: '${values.pricing}' (USD per 1M prompt and completion tokens, e.g. 0.15,0.60)`,
          );
        givenPricing = { prompt: promptPrice, completion: completionPrice };
      }
      const pricing = pick(givenPricing, prev?.pricing, null);
      const limit = pick(
        values.limit !== undefined ? intFlag(values.limit, 'limit', 1, 1, 10_000_000) : undefined,
        prev?.limit as number | undefined,
        null,
      );
      const shuffle = pick(values.shuffle, prev?.shuffle as string | undefined, null);
      if (shuffle === '')
        throw new GymError('INVALID_ARGUMENT', 'invalid --shuffle: an empty seed (any non-empty string, e.g. --shuffle 1)');
      const agents = await root.agents.load();
      const agentDef = ownValue(agents, agentName);
      const usesModel = agentDef?.usesModel !== false && !gold;
      // No silent public default: a run that calls a model names its endpoint (or $OPENAI_BASE_URL does).
      const baseURL = pick(values['base-url'], prev?.baseURL, null) ?? (usesModel ? (configuredBaseURL(null) ?? null) : null);
      const apiKey = process.env.OPENAI_API_KEY || process.env.BENCHGYM_API_KEY || undefined;
      const taskIds = pick(listFlag(values.tasks), prev?.tasks, null);
      const context = pick(values.context, prev?.context as string | undefined, null);
      const promptVariant = pick(values['prompt-variant'], prev?.promptVariant as string | undefined, null);
      const concurrency = intFlag(values.concurrency, 'concurrency', previous?.settings?.concurrency ?? 2, 1, 64);
      const retries = intFlag(values.retries, 'retries', previous?.settings?.retries ?? 2, 0, 20);

      const agent = agentUnderTest(agents, agentName, agentOptions, gold);
      if (usesModel) {
        // Once, before any episode: a run against a down or missing endpoint fails now, not after an hour of retries.
        const check = await checkModelEndpoint({ baseURL: baseURL ?? undefined, apiKey, model });
        process.stderr.write(
          `benchgym run: model endpoint ${check.baseURL} answers${check.via === 'models' ? ` (${check.models?.length ?? 0} models listed)` : ''}\n`,
        );
        if (check.warning) process.stderr.write(`benchgym run: warning: ${check.warning}\n`);
      }
      const gym = await gymFrom({ ...values, sandbox, scoring, suite: [dataset ? `${suite}=${dataset}` : suite] }, root);
      const stop = new AbortController();
      let interrupted = false;
      const onSignal = () => {
        if (interrupted) process.exit(130);
        interrupted = true;
        process.stderr.write(
          '\nbenchgym run: stopping (episodes in flight are not recorded; --resume runs them again); Ctrl-C again to quit at once\n',
        );
        stop.abort();
      };
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
      try {
        // With --server the episodes run there: this gym only selects the tasks.
        if (!values.server) await gym.sandboxes.init?.();
        if (gold) {
          const all = await gym.registry.tasks(suite);
          for (const t of taskIds ? all.filter((x) => taskIds.includes(x.id)) : all) goldOptions(t);
        }
        const outcome = await runExperiment({
          gym,
          outDir,
          suite,
          agent,
          model: {
            model,
            ...(baseURL ? { baseURL } : {}),
            ...(temperature !== null ? { temperature } : {}),
            ...(maxTokens !== null ? { maxTokens } : {}),
            ...(pricing ? { pricing } : {}),
            ...(apiKey ? { apiKey } : {}),
          },
          samples,
          tasks: taskIds ?? undefined,
          concurrency,
          retries,
          maxSteps: maxSteps ?? undefined,
          timeLimitMs: timeLimitMs ?? undefined,
          context: context ?? undefined,
          promptVariant: promptVariant ?? undefined,
          resume: values.resume,
          rerunErrors: values['rerun-errors'],
          ...(limit !== null ? { limit } : {}),
          ...(shuffle !== null ? { shuffle } : {}),
          options: { dataset, sandbox, gold, agentOptions, ...(legacyRun ? {} : { scoring }) },
          progress: streamProgress(process.stderr),
          signal: stop.signal,
          ...(values.server
            ? {
                server: {
                  url: values.server,
                  ...((values['server-token'] ?? process.env.BENCHGYM_TOKEN)
                    ? { token: values['server-token'] ?? process.env.BENCHGYM_TOKEN }
                    : {}),
                },
              }
            : {}),
        });
        const counts = passCountsOf(outcome.results);
        const total = outcome.manifest.taskIds.length * samples;
        // Errors are samples that did not pass: in the headline's denominator, the scored rate beside it.
        process.stdout.write(
          `${outcome.manifest.runId}: ${outcome.results.length}/${total} results${outcome.skipped ? ` (${outcome.skipped} from before the resume)` : ''}; ` +
            `${passRateLine(counts, { noun: 'samples', excludeErrors: values['exclude-errors'] })}\n` +
            `  ${path.join(outDir, 'results.jsonl')}\n  report: benchgym report ${outDir}\n`,
        );
        if (outcome.aborted) return 130;
        return counts.errors > 0 ? 1 : 0;
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
        await gym.close();
      }
    },
  };
}
