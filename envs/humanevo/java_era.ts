/**
 * The Java env of a change's era: the JDK is the one this machine has (17), so what an old
 * commit's poms ask of javac is brought to what that JDK accepts. JDK 17's javac refuses
 * source and target levels below 7; a pom of 2012-2019 often asks for 1.5 or 1.6, through
 * Maven's own properties (`maven.compiler.source`), a parent's (`javac.src.version`, jackson's
 * parents), `${java.version}`, or the compiler plugin's default (1.5 before plugin 3.8). Each
 * of those is a user property a `-D` overrides, so the level is raised to 8 on the command line
 * and the tree is left as the developer wrote it. A level written as a literal in the plugin's
 * configuration (`<source>1.5</source>`) cannot be overridden: that era is reported as such.
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

const prop = (pom: string, name: string) => new RegExp(`<${name.replace(/\./g, '\\.')}>\\s*([^<]+?)\\s*</${name.replace(/\./g, '\\.')}>`).exec(pom)?.[1];

/** The compile level settings of a change's poms (path → text), and what JDK 17 needs of them. */
export function javaEraOf(poms: Record<string, string>): JavaEra {
  const texts = Object.values(poms);
  const all = texts.join('\n');
  // Literal levels in a compiler plugin's configuration: <source>1.5</source>, <release>6</release>.
  const literals = [...all.matchAll(/<(source|target|release)>\s*([\d.]+)\s*<\/\1>/g)].map((m) => ({ tag: m[1]!, level: level(m[2]) }));
  const tooOldLiteral = literals.find((l) => l.level < MIN_LEVEL);
  if (tooOldLiteral) {
    return { args: [], from: `a pom sets <${tooOldLiteral.tag}>1.${tooOldLiteral.level}</${tooOldLiteral.tag}> as a literal`, unavailable: `the poms compile for Java 1.${tooOldLiteral.level} (a literal <${tooOldLiteral.tag}> no -D can override); this machine's JDK 17 compiles for 7 or later` };
  }
  const props = ['maven.compiler.release', 'maven.compiler.source', 'maven.compiler.target', 'javac.src.version', 'javac.target.version', 'java.version'];
  const found = props.map((p) => ({ name: p, value: prop(all, p) })).filter((p) => p.value !== undefined);
  const old = found.filter((p) => level(p.value) < MIN_LEVEL);
  // No level anywhere (and no literal): the compiler plugin's own default, 1.5 before plugin 3.8.
  const usesDefault = !found.length && !literals.length;
  if (!old.length && !usesDefault) return { args: [], from: found.length || literals.length ? 'the poms compile for Java 7 or later: JDK 17 as they are' : 'JDK 17' };
  const names = usesDefault ? ['maven.compiler.source', 'maven.compiler.target'] : [...new Set(old.map((p) => p.name).concat(old.some((p) => p.name.startsWith('maven.compiler')) ? [] : ['maven.compiler.source', 'maven.compiler.target']))];
  // java.version is also the JVM's own system property: raised only when a pom reads it as the level.
  const args = names.filter((n) => n !== 'java.version' || /<(source|target)>\s*\$\{java\.version\}/.test(all)).map((n) => `-D${n}=${RAISED}`);
  const why = usesDefault ? "no level in the poms (the compiler plugin's default, 1.5 before 3.8)" : old.map((p) => `${p.name} ${p.value}`).join(', ');
  return { args, from: `${why} raised to ${RAISED} for JDK 17` };
}
