import type { CliCommand } from '../command.ts';
import type { Composition } from '../composition.ts';
import { gymFlags, gymFlagsUsage, gymFrom } from '../gym_options.ts';
import { parseFlags } from '../options.ts';

const usage = (root: Composition) => `benchgym tasks: the tasks of the served suites, one a line (suite/id, language, kind, title)

Usage:
  benchgym tasks [--suite ID[=PATH]]... [--json]

Options:
  --json             a JSON list of {suite, id, title, language, kind} instead
${gymFlagsUsage(root)}

Example:
  benchgym tasks --suite examples --json
`;

export function tasksCommand(root: Composition): CliCommand {
  return {
    name: 'tasks',
    summary: 'list the tasks of the served suites',
    usage: usage(root),
    async run(args) {
      const { values } = parseFlags(args, { ...gymFlags(root), json: { type: 'boolean' } });
      const gym = await gymFrom(values, root);
      try {
        const out = [];
        for (const suite of gym.registry.suiteIds()) {
          for (const t of await gym.registry.tasks(suite))
            out.push({ suite, id: t.id, title: t.title ?? t.id, language: t.language, kind: t.kind });
        }
        if (values.json) process.stdout.write(JSON.stringify(out, null, 2) + '\n');
        else for (const t of out) process.stdout.write(`${t.suite}/${t.id}\t${t.language}\t${t.kind}\t${t.title}\n`);
        return 0;
      } finally {
        await gym.close();
      }
    },
  };
}
