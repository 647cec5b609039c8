import { fileURLToPath } from 'node:url';

/**
 * The sandbox's own host name and what it resolves to, the same on every backend that can set
 * them (local under bubblewrap, Docker). A container of the kind benchmarks' harnesses ran in
 * resolves its name to its own address, not to 127.0.0.1: code that compares its lookup with
 * '127.0.0.1' (CoderEval's cloudmesh `is_local` samples) must see what it saw there. The name
 * resolves to 127.0.1.1, as Debian names a machine without a fixed address: not the loopback
 * literal, yet reachable, since every 127/8 address is on the sandbox's loopback. A non-loopback
 * address would be held by no interface of a sandbox without network, so code that connects to
 * its own name (servers bound to it, Java's InetAddress.getLocalHost) would fail where the
 * harness's container succeeds. Resolved without DNS, which a sandbox cannot reach.
 */
export const SANDBOX_HOSTNAME = 'sandbox';
export const SANDBOX_HOST_ADDRESS = '127.0.1.1';

/** The sandbox's /etc/hosts (Docker's text for a container without network, and the sandbox's own name). */
export const SANDBOX_HOSTS_FILE = fileURLToPath(new URL('./sandbox_hosts', import.meta.url));
