import path from 'node:path';

/**
 * Where a Java build's test files are: the folders its build compiles or copies for the tests
 * only, per module, as the start state's build files declare them. Maven: each module's
 * `testSourceDirectory` (default `src/test/java`) and `testResources` (default
 * `src/test/resources`); Gradle: each project's `src/test/` (every language and resources).
 * A folder named `test` elsewhere (`src/main/java/com/src/test/java/...`) holds main sources.
 */
export function javaTestRoots(tool: 'maven' | 'gradle', buildFiles: ReadonlyMap<string, Buffer | string>): string[] {
  const roots = new Set<string>();
  for (const [rel, content] of buildFiles) {
    const name = path.posix.basename(rel);
    const module = path.posix.dirname(rel) === '.' ? '' : path.posix.dirname(rel);
    if (tool === 'maven' && name === 'pom.xml') {
      for (const dir of mavenTestDirs(content.toString('utf8'))) roots.add(joinRoot(module, dir));
    } else if (tool === 'gradle' && /^(build|settings)\.gradle(\.kts)?$/.test(name)) {
      roots.add(joinRoot(module, 'src/test'));
    }
  }
  if (!roots.size) roots.add(tool === 'maven' ? 'src/test/java' : 'src/test');
  return [...roots].filter(Boolean).sort();
}

/** Whether a workspace path is inside one of the roots. */
export function underTestRoots(rel: string, roots: readonly string[]): boolean {
  return roots.some((root) => rel === root || rel.startsWith(`${root}/`));
}

/**
 * A pom's test folders, relative to its module: `<build>`'s `testSourceDirectory` and each
 * `testResource` directory, else Maven's defaults. Profiles are not read (a profile's build is
 * not the default build); a value Maven would interpolate from anything but the module's own
 * folder (`${project.basedir}`, `${basedir}`) leaves the default.
 */
export function mavenTestDirs(pom: string): string[] {
  const text = pom.replace(/<!--[\s\S]*?-->/g, '').replace(/<profiles>[\s\S]*?<\/profiles>/g, '');
  const build = /<build>([\s\S]*?)<\/build>/.exec(text)?.[1] ?? '';
  const sources = moduleRelative(/<testSourceDirectory>([^<]*)<\/testSourceDirectory>/.exec(build)?.[1]) ?? 'src/test/java';
  const resourcesBlock = /<testResources>([\s\S]*?)<\/testResources>/.exec(build)?.[1];
  const resources = resourcesBlock
    ? [...resourcesBlock.matchAll(/<directory>([^<]*)<\/directory>/g)]
        .map((m) => moduleRelative(m[1]))
        .filter((d): d is string => Boolean(d))
    : ['src/test/resources'];
  return [...new Set([sources, ...resources])];
}

/** A build folder relative to its module, or undefined when it cannot be told without Maven. */
function moduleRelative(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const v = value
    .trim()
    .replace(/^\$\{(project\.)?basedir\}\/?/, '')
    .replace(/^\.\//, '')
    .replace(/\/+$/, '');
  if (!v || v.includes('${') || v.startsWith('/') || path.posix.normalize(v).startsWith('..')) return undefined;
  return path.posix.normalize(v);
}

const joinRoot = (module: string, dir: string) => (module ? `${module}/${dir}` : dir);
