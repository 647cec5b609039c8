/** The unprivileged uid and gid a sandbox's commands run as where the server (or the container's executor) is root. */
export interface SandboxUser {
  uid: number;
  gid: number;
}

/** nobody: every Debian-based image and host has it in /etc/passwd (tools that look their user up find one). */
export const DEFAULT_SANDBOX_USER: SandboxUser = { uid: 65534, gid: 65534 };

/** BENCHGYM_SANDBOX_UID=uid[:gid] (gid defaults to the uid), else nobody (65534). */
export function sandboxUserFromEnv(): SandboxUser {
  const m = /^(\d+)(?::(\d+))?$/.exec(process.env.BENCHGYM_SANDBOX_UID ?? '');
  const uid = m ? Number(m[1]) : DEFAULT_SANDBOX_USER.uid;
  const gid = m?.[2] !== undefined ? Number(m[2]) : m ? uid : DEFAULT_SANDBOX_USER.gid;
  // Never root: that would undo the point of dropping privileges.
  return uid === 0 || gid === 0 ? { ...DEFAULT_SANDBOX_USER } : { uid, gid };
}
