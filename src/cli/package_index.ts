/** Which package index a failed env build could not reach, read from its error message; undefined when the cause was something else. */
export type UnreachableIndex = 'PyPI' | 'Maven Central';

// pip's own words are classified by src/env/python.ts; Maven's and Gradle's are read from their logs here.
const PIP = /pip could not reach the package index/;
const JVM_FETCH = /Could not transfer artifact|Could not GET|Could not HEAD|Could not resolve|Non-resolvable/;
const NETWORK = new RegExp(
  [
    'UnknownHostException|Unknown host|Temporary failure in name resolution|Name or service not known|Network is unreachable',
    'No route to host|Connection refused|Connect timed out|connect timed out|Connection timed out|Read timed out',
    String.raw`Remote host terminated the handshake|transfer failed for https?:\/\/`,
  ].join('|'),
);

/**
 * The package index a failure names as unreachable, e.g. 'PyPI' for "could
 * not build the Python env (...): pip could not reach the package index".
 */
export function unreachableIndexOf(message: string): UnreachableIndex | undefined {
  if (PIP.test(message)) return 'PyPI';
  if (JVM_FETCH.test(message) && NETWORK.test(message)) return 'Maven Central';
  return undefined;
}

/** One line per unreachable index among `reasons` (each a task's failure messages): how many tasks it failed, and what to check. */
export function unreachableIndexLines(reasons: string[][]): string[] {
  const counts = new Map<UnreachableIndex, number>();
  for (const r of reasons) {
    const found = new Set(r.map(unreachableIndexOf).filter((x): x is UnreachableIndex => x !== undefined));
    for (const index of found) counts.set(index, (counts.get(index) ?? 0) + 1);
  }
  const advice: Record<UnreachableIndex, string> = {
    PyPI: 'pip could not reach the package index (PyPI or $PIP_INDEX_URL): check the network, a proxy ($HTTPS_PROXY) or the index URL',
    'Maven Central': 'Maven could not reach its repository (Maven Central or a mirror in settings.xml): check the network or a proxy',
  };
  return [...counts].map(
    ([index, n]) => `${advice[index]}; ${n} task${n > 1 ? 's' : ''} could not build ${n > 1 ? 'their' : 'its'} env for that`,
  );
}
