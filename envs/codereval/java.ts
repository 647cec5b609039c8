import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The Java replacement step (ReplaceMethod.java, run as a single-file program on JDK 11+). */
export const REPLACE_METHOD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'java', 'ReplaceMethod.java');
/** benchgym's Java fixture in the shape of a CoderEval task (CoderEval's Java tests are not public). */
export const JAVA_FIXTURE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'java');

/**
 * CoderEval's Java scoring as a shell command, run from the project root: replace the method in
 * its file with the candidate, recompile the sources (a compilation failure fails), run the
 * test class; its exit code decides (§3.3, "the return value of the command").
 */
export function javaScoreCommand(o: {
  file: string;
  method: string;
  candidate: string;
  testClass: string;
  srcDir?: string;
  replaceMethod?: string;
  out?: string;
}): string {
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const src = o.srcDir ?? 'src';
  const out = o.out ?? '.codereval-classes';
  return [
    `java ${q(o.replaceMethod ?? REPLACE_METHOD)} ${q(o.file)} ${q(o.method)} ${q(o.candidate)}`,
    `rm -rf ${q(out)} && mkdir -p ${q(out)}`,
    `javac -nowarn -d ${q(out)} $(find ${q(src)} -name '*.java')`,
    `java -cp ${q(out)} ${q(o.testClass)}`,
  ].join(' && ');
}
