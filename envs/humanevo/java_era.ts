/**
 * The Java env of a change's era: the JDK is the one this machine has (17), so what an old
 * commit's poms ask of javac is brought to what that JDK accepts. JDK 17's javac refuses
 * source and target levels below 7; a pom of 2012-2019 often asks for 1.5 or 1.6, through
 * Maven's own properties (`maven.compiler.source`), a parent's (`javac.src.version`, jackson's
 * parents), `${java.version}`, or the compiler plugin's default (1.5 before plugin 3.8). Each
 * of those is a user property a `-D` overrides, so the level is raised to 8 on the command line
 * and the tree is left as the developer wrote it. A level written as a literal in the plugin's
 * configuration (`<source>1.5</source>`) cannot be overridden: that era is reported as such.
 *
 * A build plugin of the era can fail on JDK 17 as well. Where a well-known parent reads the
 * plugin's version from a property, the version is raised the same way (see `PLUGIN_RAISES`).
 */

/** The lowest level JDK 17's javac compiles for; older levels are raised to 8 (the oldest still current). */
const MIN_LEVEL = 7;
const RAISED = '1.8';

export interface JavaEra {
  /** `-D` overrides for every build and test command of the change. */
  args: string[];
  /** Why, in one line (kept in the task's env derivation). */
  from: string;
  /** Set when no override can make the poms compile on this JDK. */
  unavailable?: string;
}

/** `1.6` → 6, `11` → 11; NaN for a property reference or nothing. */
function level(v: string | undefined): number {
  if (!v) return Number.NaN;
  const t = v.trim();
  const m = /^1\.(\d+)$/.exec(t) ?? /^(\d+)$/.exec(t);
  return m ? Number(m[1]) : Number.NaN;
}

/** The value of `<name>` in a pom's text (a property, or a field of a block). */
const prop = (pom: string, name: string) =>
  new RegExp(`<${name.replace(/\./g, '\\.')}>\\s*([^<]+?)\\s*</${name.replace(/\./g, '\\.')}>`).exec(pom)?.[1];

/**
 * Build plugins whose versions of an era fail on JDK 17, and the property a well-known parent
 * reads each one's version from. A pom whose parent is from `since` and older than `fixedIn`, or that sets the
 * property itself to an older version, gets `-D<property>=<version>`.
 */
export const PLUGIN_RAISES: readonly { parent: string; since: number; fixedIn: number; property: string; version: string; why: string }[] =
  [
    {
      // commons-parent 41-51 bind maven-bundle-plugin 3.x/4.x's `manifest` goal, whose bnd throws
      // ConcurrentModificationException on JDK 17 (commons-lang 2019, commons-text 2018-2020).
      parent: 'org.apache.commons:commons-parent',
      since: 41,
      fixedIn: 52,
      property: 'commons.felix.version',
      version: '5.1.8',
      why: 'maven-bundle-plugin before 5 fails on JDK 17 (ConcurrentModificationException in bnd)',
    },
  ];

/** The leading number of a version: `4.1.0` → 4, `47` → 47. */
const major = (v: string | undefined) => Number(/^\s*(\d+)/.exec(v ?? '')?.[1] ?? Number.NaN);

/** `groupId:artifactId` → version of each pom's `<parent>`. */
function parentsOf(poms: string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const pom of poms) {
    const parent = /<parent>([\s\S]*?)<\/parent>/.exec(pom)?.[1];
    if (!parent) continue;
    const [g, a, v] = ['groupId', 'artifactId', 'version'].map((t) => prop(parent, t));
    if (g && a && v) out.set(`${g}:${a}`, v);
  }
  return out;
}

/** The `-D` raises of build plugins the poms' parents (or the poms themselves) pin to versions that fail on JDK 17. */
function pluginRaises(poms: string[]): { args: string[]; why: string[] } {
  const parents = parentsOf(poms);
  const all = poms.join('\n');
  const args: string[] = [];
  const why: string[] = [];
  for (const r of PLUGIN_RAISES) {
    const own = prop(all, r.property);
    const parent = parents.get(r.parent);
    const old =
      own !== undefined ? major(own) < major(r.version) : parent !== undefined && major(parent) >= r.since && major(parent) < r.fixedIn;
    if (!old) continue;
    args.push(`-D${r.property}=${r.version}`);
    why.push(`${r.property} ${own ?? `of ${r.parent.split(':')[1]} ${parent}`} raised to ${r.version}: ${r.why}`);
  }
  return { args, why };
}

/** What JDK 17 needs of a change's poms (path → text): its compile levels, then its build plugins. */
export function javaEraOf(poms: Record<string, string>): JavaEra {
  const levels = compileLevels(poms);
  if (levels.unavailable) return levels;
  const plugins = pluginRaises(Object.values(poms));
  if (!plugins.args.length) return levels;
  return {
    args: [...levels.args, ...plugins.args],
    from: levels.args.length ? `${levels.from}; ${plugins.why.join('; ')}` : plugins.why.join('; '),
  };
}

/** The compile level settings of a change's poms, and what JDK 17 needs of them. */
function compileLevels(poms: Record<string, string>): JavaEra {
  const all = Object.values(poms).join('\n');
  const raised = new Map<string, string>();
  const why: string[] = [];
  // The compiler plugin's configuration: <source>1.5</source> (a literal), <release>${javaVersion}</release> (a property).
  const configured = [...all.matchAll(/<(source|target|release)>\s*([^<\s]+)\s*<\/\1>/g)].map((m) => ({ tag: m[1]!, value: m[2]! }));
  for (const { tag, value } of configured) {
    const ref = /^\$\{([\w.-]+)\}$/.exec(value);
    if (!ref) {
      const lv = level(value);
      if (lv < MIN_LEVEL)
        return {
          args: [],
          from: `a pom sets <${tag}>${value}</${tag}> as a literal`,
          unavailable:
            `the poms compile for Java ${value} (a literal <${tag}> no -D can override); ` +
            "this machine's JDK 17 compiles for 7 or later",
        };
      continue;
    }
    const name = ref[1]!;
    const lv = level(prop(all, name));
    if (lv < MIN_LEVEL && !raised.has(name)) {
      raised.set(name, tag === 'release' ? '8' : RAISED);
      why.push(`${name} ${prop(all, name)}`);
    }
  }
  // Properties the compiler plugin or a parent pom reads without naming them here.
  const implicit = [
    'maven.compiler.release',
    'maven.compiler.source',
    'maven.compiler.target',
    'javac.src.version',
    'javac.target.version',
  ];
  const present = implicit.filter((n) => prop(all, n) !== undefined);
  for (const n of present) {
    if (level(prop(all, n)) < MIN_LEVEL && !raised.has(n)) {
      raised.set(n, n.endsWith('release') ? '8' : RAISED);
      why.push(`${n} ${prop(all, n)}`);
    }
  }
  // No level anywhere: the compiler plugin's own default, 1.5 before plugin 3.8.
  const usesDefault = !configured.length && !present.length;
  if (usesDefault) why.push("no level in the poms (the compiler plugin's default, 1.5 before 3.8)");
  if (usesDefault || [...raised.keys()].some((n) => n.startsWith('javac.')))
    for (const n of ['maven.compiler.source', 'maven.compiler.target']) if (!raised.has(n)) raised.set(n, RAISED);
  if (!raised.size) return { args: [], from: 'the poms compile for Java 7 or later: JDK 17 as they are' };
  return { args: [...raised].map(([n, v]) => `-D${n}=${v}`), from: `${why.join(', ')} raised to ${RAISED} for JDK 17` };
}
