/**
 * A JVM in a local sandbox cannot read the sandbox's memory limit: its cgroup is not where the
 * JVM looks (cgroup v1, or a namespaced root that shows none), so it sizes its heaps from the
 * host's memory. Maven and its Surefire fork then take a quarter of the host each, and together
 * outgrow the sandbox: a run that fits in a container is killed here. A Java env (one that sets
 * JAVA_HOME or JAVA_TOOL_OPTIONS) is told the sandbox's memory as the machine's (-XX:MaxRAM), as
 * a container's JVM reads it from its cgroup: the same heaps on both backends.
 *
 * Under bubblewrap (its own cgroup namespace) reading the cgroup is worse than wrong: JDK 17's
 * container metrics throw a NullPointerException on cgroup v1 (the namespaced path matches no
 * mount), so `ManagementFactory.getOperatingSystemMXBean()` fails, and with it every test that
 * asks for the system load (dubbo's LoadStatusCheckerTest). A Java env there runs with the JVM's
 * container support off (-XX:-UseContainerSupport): the memory is told by MaxRAM, and the
 * cgroup still bounds what the sandbox may use.
 */
export function jvmMemoryVars(
  vars: Record<string, string> | undefined,
  memoryBytes: number | undefined,
  opts: { namespacedCgroup?: boolean } = {},
): Record<string, string> {
  if (!vars || !('JAVA_HOME' in vars || 'JAVA_TOOL_OPTIONS' in vars)) return {};
  const own = vars.JAVA_TOOL_OPTIONS ?? '';
  const add = [
    ...(memoryBytes && !/-XX:MaxRAM=/.test(own) ? [`-XX:MaxRAM=${memoryBytes}`] : []),
    ...(opts.namespacedCgroup && !/-XX:[+-]UseContainerSupport/.test(own) ? ['-XX:-UseContainerSupport'] : []),
  ];
  return add.length ? { JAVA_TOOL_OPTIONS: [own, ...add].filter(Boolean).join(' ') } : {};
}
