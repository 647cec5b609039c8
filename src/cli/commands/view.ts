import { GymError } from '../../errors.ts';
import { DEFAULT_VIEW_PORT } from '../../protocol/viewer_links.ts';
import { discoverRuns, RunStore } from '../../viewer/runs.ts';
import { startViewerServer } from '../../viewer/server.ts';
import type { CliCommand } from '../command.ts';
import { intFlag, parseFlags } from '../options.ts';
import { onShutdownSignals } from '../shutdown.ts';

const USAGE = `benchgym view: a local web viewer of runs (a table per run, each episode as a transcript,
two runs side by side), until SIGINT / SIGTERM

Usage:
  benchgym view [RUN_DIR...] [--port ${DEFAULT_VIEW_PORT}] [--host 127.0.0.1 --token T]

  RUN_DIR is a directory written by benchgym run (run.json, results.jsonl, trajectories/), or
  a directory holding such directories (default: .). A run still being written updates as
  its results arrive.

Options:
  --port N           the port (default ${DEFAULT_VIEW_PORT}; 0: any free port)
  --host HOST        the address to listen on (default 127.0.0.1; any other needs a token)
  --token T          a bearer token every request must carry (default $BENCHGYM_TOKEN; open
                     the page as http://HOST:PORT/?token=T)
  --allow-host NAME  Host names accepted besides the local ones (repeatable)

Example:
  benchgym view runs/swe-agent runs/feedback
`;

export const viewCommand: CliCommand = {
  name: 'view',
  summary: 'a local web viewer of runs: tables, transcripts, two runs side by side',
  usage: USAGE,
  async run(args) {
    const { values, positionals } = parseFlags(args, {
      port: { type: 'string' },
      host: { type: 'string' },
      token: { type: 'string' },
      'allow-host': { type: 'string', multiple: true },
    });
    const dirs = await discoverRuns(positionals.length ? positionals : ['.']);
    if (!dirs.length) throw new GymError('INVALID_ARGUMENT', 'no run directory to show');
    const runs = new RunStore(dirs);
    const token = values.token ?? process.env.BENCHGYM_TOKEN;
    const server = await startViewerServer(
      { runs },
      {
        host: values.host ?? '127.0.0.1',
        port: intFlag(values.port, 'port', DEFAULT_VIEW_PORT, 0, 65535),
        token,
        allowedHosts: values['allow-host'],
      },
    );
    const url = token ? `${server.url}?token=<token>` : server.url;
    process.stderr.write(
      `benchgym view: ${runs.ids().length} run${runs.ids().length === 1 ? '' : 's'} (${runs.ids().join(', ')})\n  open ${url}\n`,
    );
    onShutdownSignals(() => server.close());
    await new Promise(() => {});
    return 0;
  },
};
