import { INFRA_CODES, toGymError, type GymError, type GymErrorCode } from '../../errors.ts';
import { JSON_RPC, OpenEnvValidationError, type ToolErrorType, type ValidationIssue, type WsErrorCode } from './wire.ts';

/**
 * benchgym's GymErrors in OpenEnv's words: a `{"type": "error"}` reply's code, a tool
 * error's type, a JSON-RPC code, an HTTP status. The GymError itself always goes along.
 */

/** Codes that mean the request named something wrong or missing. */
const REQUEST_CODES: ReadonlySet<GymErrorCode> = new Set(['INVALID_ARGUMENT', 'SUITE_NOT_FOUND', 'TASK_NOT_FOUND']);

/** The body of a `{"type": "error"}` reply: OpenEnv's `message` and `code`, the problems of a refused message, and benchgym's error. */
export interface WsErrorData {
  message: string;
  code: WsErrorCode;
  errors?: ValidationIssue[];
  error?: ReturnType<GymError['toJSON']>;
}

export function wsErrorData(err: unknown): WsErrorData {
  if (err instanceof OpenEnvValidationError) return { message: err.message, code: 'VALIDATION_ERROR', errors: err.issues };
  const e = toGymError(err);
  const code: WsErrorCode = REQUEST_CODES.has(e.code) ? 'VALIDATION_ERROR' : e.code === 'CAPACITY' ? 'CAPACITY_REACHED' : 'EXECUTION_ERROR';
  return { message: `${e.code}: ${e.message}`, code, error: e.toJSON() };
}

/**
 * A failed tool call's `error_type`: its arguments, a tool the session does not offer, a call cut
 * by its `timeout_s`, the harness (never the agent's doing), or the tool's own failure.
 */
export function toolErrorType(e: GymError, timedOut: boolean): ToolErrorType {
  if (timedOut) return 'timeout';
  if (e.code === 'INVALID_ARGUMENT') return 'invalid_args';
  if (e.code === 'TOOL_NOT_AVAILABLE') return 'tool_not_found';
  if (INFRA_CODES.has(e.code) || e.details?.sandboxLost) return 'transport_error';
  return 'execution_error';
}

/** The JSON-RPC code of a failed `tools/call` or session method. */
export function rpcErrorCode(e: GymError): number {
  if (e.code === 'INVALID_ARGUMENT' || e.code === 'TOOL_NOT_AVAILABLE' || e.code === 'EPISODE_NOT_FOUND') return JSON_RPC.INVALID_PARAMS;
  if (e.code === 'CAPACITY') return JSON_RPC.SERVER_ERROR;
  return JSON_RPC.INTERNAL_ERROR;
}

/** The HTTP status of a failed `/reset` or `/step`: the request's fault (422, as FastAPI says it), no room (503), or ours (500). */
export function httpStatusOf(e: GymError): number {
  if (REQUEST_CODES.has(e.code)) return 422;
  if (e.code === 'CAPACITY') return 503;
  return 500;
}
