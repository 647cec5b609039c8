import express, { type Request, type Response, type Router } from 'express';
import type { Gym } from '../../episode/gym.ts';
import { toGymError } from '../../errors.ts';
import { VERSION } from '../../version.ts';
import { httpStatusOf } from './errors.ts';
import { handleRpc, rpcError, type RpcContext } from './rpc.ts';
import { openApiDocument, openEnvSchemas } from './schema.ts';
import type { OpenEnvSession } from './session.ts';
import { JSON_RPC, OpenEnvValidationError, parseWire, StepRequest, validationIssues, type ValidationIssue } from './wire.ts';
import { z } from 'zod';

/** Bodies up to this size, as the WebSocket's frames (a create_file step carries a whole file). */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;

/** FastAPI's answer to a body it could not take: 422 with `detail`, a list of problems. */
function unprocessable(res: Response, detail: ValidationIssue[]): void {
  res.status(422).json({ detail });
}

/** The JSON of a raw body; an empty body is `fallback`; a malformed one is a json_invalid problem, as FastAPI says it. */
function jsonBody(req: Request, fallback: unknown): { ok: true; value: unknown } | { ok: false; detail: ValidationIssue[] } {
  const text = typeof req.body === 'string' ? req.body : '';
  if (!text.trim()) return { ok: true, value: fallback };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    return { ok: false, detail: [{ type: 'json_invalid', loc: ['body'], msg: `JSON decode error: ${(err as Error).message}` }] };
  }
}

/**
 * OpenEnv's HTTP routes below the base path. As in OpenEnv, `/reset` and `/step` are
 * stateless: each runs on a fresh session that is closed when it answers (a `/reset` starts an
 * episode, returns its first observation and ends it); the episode that lasts is the
 * WebSocket's (`/ws`). `/mcp` takes OpenEnv's JSON-RPC, with sessions of its own.
 */
export function openEnvRoutes(gym: Gym, newSession: () => OpenEnvSession, rpc: Omit<RpcContext, 'bound'>): Router {
  const router = express.Router();
  router.use(express.text({ type: () => true, limit: MAX_BODY_BYTES }));

  const fresh = async <T>(fn: (session: OpenEnvSession) => Promise<T>): Promise<T> => {
    const session = newSession();
    try {
      return await fn(session);
    } finally {
      await session.close();
    }
  };
  const fail = (res: Response, err: unknown) => {
    if (err instanceof OpenEnvValidationError) return unprocessable(res, err.issues);
    const e = toGymError(err);
    res.status(httpStatusOf(e)).json({ detail: `${e.code}: ${e.message}`, error: e.toJSON() });
  };

  router.post('/reset', async (req: Request, res: Response) => {
    const body = jsonBody(req, {});
    if (!body.ok) return unprocessable(res, body.detail);
    try {
      // The data's problems are the body's, as FastAPI names them.
      const data = body.value && typeof body.value === 'object' && !Array.isArray(body.value) ? body.value : undefined;
      if (!data)
        return unprocessable(res, [{ type: 'model_attributes_type', loc: ['body'], msg: 'Input should be a valid dictionary or object' }]);
      res.json(await fresh((s) => s.reset(data)));
    } catch (err) {
      if (err instanceof OpenEnvValidationError)
        return unprocessable(
          res,
          err.issues.map((i) => ({ ...i, loc: ['body', ...i.loc.slice(1)] })),
        );
      fail(res, err);
    }
  });

  router.post('/step', async (req: Request, res: Response) => {
    const body = jsonBody(req, undefined);
    if (!body.ok) return unprocessable(res, body.detail);
    const parsed = StepRequest.safeParse(body.value);
    if (!parsed.success) return unprocessable(res, validationIssues(parsed.error as z.ZodError, ['body']));
    const { action, timeout_s } = parsed.data;
    try {
      res.json(await fresh((s) => s.step(action, timeout_s ? { timeoutMs: timeout_s * 1000 } : {})));
    } catch (err) {
      // An action that is not OpenEnv's: its problems, named from the action as OpenEnv does.
      if (err instanceof OpenEnvValidationError)
        return unprocessable(
          res,
          err.issues.map((i) => ({ ...i, loc: i.loc.slice(1) })),
        );
      fail(res, err);
    }
  });

  router.get('/state', async (_req: Request, res: Response) => {
    res.json(await fresh(async (s) => s.state()));
  });
  router.get('/health', (_req: Request, res: Response) => {
    res.json({ status: 'healthy' });
  });
  router.get('/metadata', async (_req: Request, res: Response) => {
    const suites = await gym.registry.list();
    res.json({
      name: 'benchgym',
      description:
        `Code-benchmark tasks as episodes: ${suites.map((s) => `${s.id} (${s.taskCount} tasks)`).join(', ')}. ` +
        'reset chooses a task (task_id, or the next of a suite in a seeded order); call_tool runs a tool; ' +
        'submit scores the work with hidden tests (reward 0 or 1).',
      readme_content: null,
      version: VERSION,
      author: null,
      documentation_url: null,
    });
  });
  router.get('/schema', (_req: Request, res: Response) => {
    res.json(openEnvSchemas());
  });
  router.get('/openapi.json', (_req: Request, res: Response) => {
    res.json(openApiDocument());
  });
  router.post('/mcp', async (req: Request, res: Response) => {
    const body = jsonBody(req, undefined);
    // OpenEnv answers a malformed request with 200 and a JSON-RPC error, not an HTTP error.
    if (!body.ok) return res.json(rpcError(null, JSON_RPC.PARSE_ERROR, body.detail[0]!.msg.replace('JSON decode error', 'Parse error')));
    res.json(await handleRpc(body.value, rpc));
  });
  return router;
}
