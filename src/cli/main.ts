import { toGymError } from '../errors.ts';
import { VERSION } from '../version.ts';
import type { CliCommand } from './command.ts';
import { loadSuites, type Composition } from './composition.ts';
import { closest } from './options.ts';

/**
 * A command as `--help` lists it: its name and summary known without importing it, its code
 * imported only when it runs (so `--version` and `--help` load no backend, suite or agent).
 */
export interface CommandEntry {
  name: string;
  summary: string;
  load(): Promise<CliCommand>;
}

/** The built-in commands, each imported when used. */
function builtinCommands(root: Composition): CommandEntry[] {
  return [
    {
      name: 'serve',
      summary: 'serve the gym over HTTP: MCP, the WebSocket gym protocol, OpenEnv and terminals',
      load: async () => (await import('./commands/serve.ts')).serveCommand(root),
    },
    {
      name: 'mcp',
      summary: 'MCP over stdio (for Claude Desktop / Claude Code)',
      load: async () => (await import('./commands/mcp.ts')).mcpCommand(root),
    },
    {
      name: 'tasks',
      summary: 'list the tasks of the served suites',
      load: async () => (await import('./commands/tasks.ts')).tasksCommand(root),
    },
    {
      name: 'validate',
      summary: 'gold passes, start state fails, for every task',
      load: async () => (await import('./commands/validate.ts')).validateCommand(root),
    },
    {
      name: 'score',
      summary: "replay a benchmark's published model outputs: agreement with their verdicts",
      // Its flags and --help are every suite's replay's: it loads them all.
      load: async () => (await import('./commands/score.ts')).scoreCommand(root, await loadSuites(root)),
    },
    {
      name: 'shell',
      summary: 'a terminal into an episode on a running server (a task id starts an episode first)',
      load: async () => (await import('./commands/shell.ts')).shellCommand,
    },
    {
      name: 'run',
      summary: 'an agent over a suite: DIR/run.json, DIR/results.jsonl, DIR/trajectories/',
      load: async () => (await import('./commands/run.ts')).runCommand(root),
    },
    {
      name: 'report',
      summary: 'report.md and report.html (pass@k, CIs, breakdowns, comparisons of several runs)',
      load: async () => (await import('./commands/report.ts')).reportCommand(root),
    },
    {
      name: 'export-trajectories',
      summary: 'export run or server trajectories to ATIF (Harbor, NeMo Gym, SkyRL)',
      load: async () => (await import('./commands/export_trajectories.ts')).exportTrajectoriesCommand,
    },
    {
      name: 'view',
      summary: 'a local web viewer of runs: tables, transcripts, two runs side by side',
      load: async () => (await import('./commands/view.ts')).viewCommand,
    },
    {
      name: 'images',
      summary: 'build (base) or list (list) the Docker sandbox base images',
      load: async () => (await import('./commands/images.ts')).imagesCommand,
    },
  ];
}

/** The built-in commands, then every command a suite adds, in `benchgym --help` order: names and summaries, no code loaded. */
export function cliCommands(root: Composition): CommandEntry[] {
  const commands = new Map(builtinCommands(root).map((c) => [c.name, c]));
  for (const suite of root.suites) {
    for (const c of suite.commands) {
      if (commands.has(c.name)) throw new Error(`suite '${suite.id}' adds a command '${c.name}' the CLI already has`);
      const load = async () => {
        const command = (await suite.load()).commands?.find((d) => d.name === c.name);
        if (!command) throw new Error(`suite '${suite.id}' declares a command '${c.name}' it does not have`);
        return command;
      };
      commands.set(c.name, { name: c.name, summary: c.summary, load });
    }
  }
  return [...commands.values()];
}

function usage(commands: CommandEntry[]): string {
  const width = Math.max('--version'.length, ...commands.map((c) => c.name.length)) + 2;
  return `benchgym: a gym server for code benchmarks

Usage: benchgym COMMAND [options]     benchgym COMMAND --help: the command's options, defaults and an example

Commands:
${commands.map((c) => `  ${c.name.padEnd(width)}${c.summary}`).join('\n')}
  ${'--version'.padEnd(width)}print the version
`;
}

/**
 * The CLI: runs `argv`'s command with the suites and agents of `root`; resolves to the exit
 * code (2 on a usage error or a GymError).
 *
 * @example
 * process.exitCode = await main(process.argv.slice(2), BUILTINS);
 */
export async function main(argv: string[], root: Composition): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-V' || name === 'version') {
    process.stdout.write(`benchgym ${VERSION}\n`);
    return 0;
  }
  const commands = cliCommands(root);
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(usage(commands));
    return name ? 0 : 2;
  }
  const entry = commands.find((c) => c.name === name);
  if (!entry) {
    const guess = closest(
      name,
      commands.map((c) => c.name),
    );
    process.stderr.write(`benchgym: unknown command '${name}'${guess ? `; did you mean '${guess}'?` : ''}\n\n${usage(commands)}`);
    return 2;
  }
  try {
    const command = await entry.load();
    if (rest.includes('--help') || rest.includes('-h')) {
      process.stdout.write(command.usage);
      return 0;
    }
    return await command.run(rest);
  } catch (err) {
    const e = toGymError(err);
    process.stderr.write(`benchgym ${name}: ${e.code}: ${e.message}\n`);
    return 2;
  }
}
