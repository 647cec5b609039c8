import { START_STATE } from '../../env/images.ts';

/** Where every container sandbox keeps the agent's workspace. */
export const WORKDIR = '/workspace';

/**
 * The shell command that lays the start state baked into an instance image out in the workspace,
 * as the commands' uid: entry by entry, since the workspace's root may be root's and keeps its mode.
 */
export const LAYOUT = [
  `if [ -d ${START_STATE} ]; then find ${START_STATE} -mindepth 1 -maxdepth 1 -exec cp -a -t ${WORKDIR}/ {} + || exit 1; fi`,
  `rm -f ${WORKDIR}/.benchgym-keep`,
].join('; ');
