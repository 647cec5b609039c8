/** The in-sandbox executor: its binary (built from ./go), its protocol, and the host's client. */
export {
  ensureExecutorBinary,
  executorSourceHash,
  findGo,
  hostArch,
  EXECUTOR_BINARY_NAME,
  EXECUTOR_SOURCE_DIR,
  type ExecutorArch,
  type ExecutorBuildOptions,
} from './build.ts';
export {
  ExecutorClient,
  DEFAULT_LIST_SKIP,
  type ExecutorClientOptions,
  type ExecutorExecOptions,
  type ExecutorStreams,
  type RunningExec,
} from './client.ts';
export { startExecutorProcess, type ExecutorProcessOptions } from './process.ts';
export { EXECUTOR_PROTOCOL, EXECUTOR_ERROR_CODES, type ExecutorErrorCode } from './protocol.ts';
