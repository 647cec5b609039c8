import { GymError } from '../../errors.ts';
import { headlines, writeReport } from '../../runner/report.ts';
import type { CliCommand } from '../command.ts';
import { loadSuites, type Composition } from '../composition.ts';
import { listFlag, parseFlags } from '../options.ts';

const USAGE = `benchgym report: report.md and report.html of one or more runs (pass@k, confidence intervals,
breakdowns, comparisons of several runs)

Usage:
  benchgym report DIR [DIR...] [--out PATH] [--by key1,key2] [--exclude-errors]

Options:
  --out PATH         where report.md and report.html go (default: DIR for one run, else .)
  --by key1,key2     break the figures down by these task metadata keys
  --exclude-errors   leave infrastructure failures out of every denominator (by default a sample that
                     ended in an error is one that did not pass; the headline shows both rates either way)

Example:
  benchgym report runs/gpt-4o runs/claude --out reports/
`;

export function reportCommand(root: Composition): CliCommand {
  return {
    name: 'report',
    summary: 'report.md and report.html (pass@k, CIs, breakdowns, comparisons of several runs)',
    usage: USAGE,
    async run(args) {
      const { values, positionals } = parseFlags(args, {
        out: { type: 'string' },
        by: { type: 'string' },
        'exclude-errors': { type: 'boolean' },
      });
      if (!positionals.length) throw new GymError('INVALID_ARGUMENT', 'give one or more run directories: benchgym report DIR [DIR...]');
      const out = values.out ?? (positionals.length === 1 ? positionals[0]! : '.');
      // Every suite's sections: a section says nothing of runs it has no figures for.
      const sections = (await loadSuites(root)).flatMap((s) => s.reportSections ?? []);
      const excludeErrors = values['exclude-errors'] ?? false;
      const written = await writeReport(positionals, out, { keys: listFlag(values.by), sections, excludeErrors });
      for (const line of headlines(written.data)) process.stdout.write(`${line}\n`);
      process.stdout.write(`${written.md}\n${written.html}\n`);
      return 0;
    },
  };
}
