/**
 * A JVM in a local sandbox cannot read the sandbox's memory limit: its cgroup is not where the
 * JVM looks (cgroup v1, or a namespaced root that shows none), so it sizes its heaps from the
 * host's memory. Maven and its Surefire fork then take a quarter of the host each, and together
 * outgrow the sandbox: a run that fits in a container is killed here. A Java env (one that sets
 * JAVA_HOME or JAVA_TOOL_OPTIONS) is told the sandbox's memory as the machine's (-XX:MaxRAM), as
 * a container's JVM reads it from its cgroup: the same heaps on both backends.
 */
export function jvmMemoryVars(vars: Record<string, string> | undefined, memoryBytes: number | undefined): Record<string, string> {
  if (!memoryBytes || !vars || !('JAVA_HOME' in vars || 'JAVA_TOOL_OPTIONS' in vars)) return {};
  if (/-XX:MaxRAM=/.test(vars.JAVA_TOOL_OPTIONS ?? '')) return {};
  return { JAVA_TOOL_OPTIONS: [vars.JAVA_TOOL_OPTIONS, `-XX:MaxRAM=${memoryBytes}`].filter(Boolean).join(' ') };
}
