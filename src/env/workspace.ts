import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { GymError } from '../errors.ts';
import { assertNoFuture, cachedCheckout, git } from '../repo/index.ts';
import type { WorkspaceSource } from '../tasks/schema.ts';
import { contentKey } from './key.ts';
import { OncePerKey, withDirLock } from '../lock.ts';

type GitWorkspace = Extract<WorkspaceSource, { type: 'git' }>;

const once = new OncePerKey<string>();

/**
 * The start state of a `git` workspace as a host directory, made once per machine under
 * `<cacheDir>/repos`: the repository at its base commit with no future (`cachedCheckout`),
 * plus, when the task has build-setup `edits`, one commit "benchgym: build setup" on top
 * holding them (so `git reset --hard HEAD` keeps them and `git log` shows them for what
 * they are). The directory is shared: sandboxes copy it, nothing writes to it.
 */
export async function gitStartState(cacheDir: string, ws: GitWorkspace, signal?: AbortSignal): Promise<string> {
  const checkout = await cachedCheckout({
    cacheDir,
    repo: ws.repo,
    commit: ws.commit,
    reposDir: ws.reposDir,
    allowNetwork: ws.allowNetwork,
    signal,
  });
  if (!ws.edits.length) return checkout.dir;
  const dir = `${checkout.dir}-setup-${contentKey(ws.edits)}`;
  const marker = `${dir}.ready`;
  return once.run(dir, () =>
    withDirLock(`${dir}.lock`, async () => {
      if (existsSync(marker)) return dir;
      await fs.rm(dir, { recursive: true, force: true });
      try {
        await fs.cp(checkout.dir, dir, { recursive: true });
        for (const edit of ws.edits) {
          const file = path.resolve(dir, edit.file);
          if (!file.startsWith(dir + path.sep))
            throw new GymError('TASK_INVALID', `build-setup edit of '${edit.file}' leaves the repository`);
          const text = await fs.readFile(file, 'utf8').catch(() => null);
          if (text === null) throw new GymError('ENV_BUILD_FAILED', `build-setup edit: ${edit.file} does not exist at ${ws.commit}`);
          if (!text.includes(edit.find))
            throw new GymError('ENV_BUILD_FAILED', `build-setup edit: '${edit.find}' not found in ${edit.file} at ${ws.commit}`);
          await fs.writeFile(file, text.split(edit.find).join(edit.replace));
        }
        // The commit is made by hand: `git commit` refuses a tree whose entries name blobs the
        // checkout lacks (a mirror without jackson-databind's old javadoc pages, Checkout.missing).
        await git(['add', '--', ...new Set(ws.edits.map((e) => e.file))], { cwd: dir });
        const tree = (await git(['write-tree', '--missing-ok'], { cwd: dir })).trim();
        const message = ['-m', 'benchgym: build setup', '-m', ws.edits.map((e) => `${e.file}: ${e.find} -> ${e.replace}`).join('\n')];
        const setup = (await git(['commit-tree', tree, '-p', 'HEAD', ...message], { cwd: dir })).trim();
        await git(['update-ref', 'HEAD', setup], { cwd: dir });
        await fs.rm(path.join(dir, '.git', 'logs'), { recursive: true, force: true });
        const parent = (await git(['rev-parse', 'HEAD^'], { cwd: dir })).trim();
        if (parent !== ws.commit) throw new GymError('ENV_BUILD_FAILED', `build-setup commit has parent ${parent}, not ${ws.commit}`);
        await assertNoFuture(dir, 'HEAD');
        await fs.writeFile(marker, new Date().toISOString());
        return dir;
      } catch (err) {
        await fs.rm(dir, { recursive: true, force: true });
        throw err;
      }
    }),
  );
}

/** Every build file of a project (pom.xml, *.gradle[.kts], gradle.properties, .mvn/*), by relative path: what an env depends on. */
export async function buildFiles(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (rel: string, depth: number): Promise<void> => {
    if (depth > 6) return;
    for (const e of await fs.readdir(path.join(dir, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) {
        if (['.git', 'target', 'build', 'node_modules', '.gradle', 'src'].includes(e.name)) continue;
        await walk(r, depth + 1);
      } else if (
        e.isFile() &&
        (/^(pom\.xml|build\.gradle(\.kts)?|settings\.gradle(\.kts)?|gradle\.properties|gradle-wrapper\.properties)$/.test(e.name) ||
          r.startsWith('.mvn/'))
      ) {
        out[r] = await fs.readFile(path.join(dir, r), 'utf8');
      }
    }
  };
  await walk('', 0);
  return out;
}

/**
 * The Java test sources of a project (`[<module>/]src/test/java/**.java`), relative to `dir`;
 * build output, `.git` and dependency folders skipped.
 */
export async function javaTestSources(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (rel: string, depth: number): Promise<void> => {
    if (depth > 24) return;
    for (const e of await fs.readdir(path.join(dir, rel), { withFileTypes: true }).catch(() => [])) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) {
        if (!['.git', 'target', 'build', 'node_modules', '.gradle', '.mvn'].includes(e.name)) await walk(r, depth + 1);
      } else if (e.isFile() && e.name.endsWith('.java') && /(^|\/)src\/test\/java\//.test(r)) {
        out.push(r);
      }
    }
  };
  await walk('', 0);
  return out.sort();
}
