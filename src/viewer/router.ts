import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { z } from 'zod';
import { atifFileName, atifOfAttempt, atifOfGymFile } from '../atif/export.ts';
import { GymError, toGymError } from '../errors.ts';
import { pairKey } from '../runner/results.ts';
import { LineIndex } from './line_index.ts';
import type { LiveEpisodes } from './live.ts';
import { viewerPage, VIEWER_CSP } from './page.ts';
import { parseResultQuery, ResultTable } from './query.ts';
import { summarize, type RunStore } from './runs.ts';
import { isGymTrajectoryPath, transcriptPage, type TranscriptFiles } from './transcript.ts';

/** What a viewer shows: run directories (`benchgym view`), live episodes (`benchgym serve`), or both. */
export interface ViewerSources {
  runs?: RunStore;
  live?: LiveEpisodes;
}

const STATIC = fileURLToPath(new URL('./static/', import.meta.url));
/** The page's files by name; a Map, so `__proto__` or `constructor` names no file. */
const ASSETS = new Map([
  ['viewer.js', 'text/javascript; charset=utf-8'],
  ['viewer.css', 'text/css; charset=utf-8'],
]);

const ItemsQuery = z.object({
  from: z.coerce.number().int().min(0).default(0),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});

function itemsQuery(req: Request): z.infer<typeof ItemsQuery> {
  const parsed = ItemsQuery.safeParse(req.query);
  if (!parsed.success)
    throw new GymError(
      'INVALID_ARGUMENT',
      `bad transcript query: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  return parsed.data;
}

function sampleOf(req: Request): number {
  const n = Number(req.params.sample);
  if (!Number.isInteger(n) || n < 0)
    throw new GymError('INVALID_ARGUMENT', `sample '${String(req.params.sample)}' is not a sample number (0, 1, ...)`);
  return n;
}

/**
 * What reaches Express's error handling (a path that does not decode, a file that cannot be
 * sent): a JSON error of one line. Express's own handler would print the stack, naming the server's paths.
 */
export function viewerErrorHandler(err: unknown, _req: Request, res: Response, _next: NextFunction): void {
  const e = err as { status?: unknown; statusCode?: unknown; expose?: unknown; message?: unknown };
  const raw = Number(e?.status ?? e?.statusCode);
  const status = Number.isInteger(raw) && raw >= 400 && raw < 600 ? raw : 500;
  const message =
    status < 500 && e?.expose !== false && typeof e?.message === 'string'
      ? e.message
      : status === 404
        ? 'not found'
        : status < 500
          ? 'bad request'
          : 'internal error';
  if (res.headersSent) return void res.end();
  res.status(status).json({ error: { code: status === 404 ? 'NOT_FOUND' : status < 500 ? 'INVALID_ARGUMENT' : 'INTERNAL', message } });
}

/**
 * The viewer's routes, to mount anywhere (`/` for `benchgym view`, `/view/` under `benchgym
 * serve`): the page, its two assets, and a JSON API the page pages through. The access
 * checks are the mounting server's; every address here is relative, so a mount point needs
 * no configuration.
 */
export function viewerRouter(sources: ViewerSources): Router {
  const router = express.Router();
  const index = new LineIndex();
  const tables = new Map<string, ResultTable>();
  const tableOf = (id: string) => tables.get(id) ?? (tables.set(id, new ResultTable()), tables.get(id)!);

  router.use((_req, res, next) => {
    res.set('X-Content-Type-Options', 'nosniff').set('Referrer-Policy', 'no-referrer').set('Cache-Control', 'no-store');
    next();
  });
  router.get('/', (req: Request, res: Response) => {
    const token = typeof req.query.token === 'string' ? req.query.token : undefined;
    res
      .set('Content-Security-Policy', VIEWER_CSP)
      .type('html')
      .send(viewerPage({ token, live: Boolean(sources.live) }));
  });
  router.get('/assets/:name', (req: Request, res: Response) => {
    const name = String(req.params.name);
    const type = ASSETS.get(name);
    if (!type) return void res.status(404).type('text/plain').send('no such asset\n');
    res.type(type).sendFile(path.join(STATIC, name));
  });

  const failed = (res: Response, err: unknown) => {
    const e = toGymError(err);
    const status = e.code === 'INVALID_ARGUMENT' ? 400 : e.code === 'EPISODE_NOT_FOUND' || e.code === 'TASK_NOT_FOUND' ? 404 : 500;
    res.status(status).json({ error: { code: e.code, message: e.message } });
  };
  const api = (fn: (req: Request) => Promise<unknown> | unknown) => async (req: Request, res: Response) => {
    try {
      res.json(await fn(req));
    } catch (err) {
      failed(res, err);
    }
  };
  /** JSON a browser saves as `name` rather than shows. */
  const download = (res: Response, name: string, value: unknown) => {
    res
      .attachment(name)
      .type('application/json')
      .send(`${JSON.stringify(value, null, 2)}\n`);
  };
  const runs = () => {
    if (!sources.runs) throw new GymError('INVALID_ARGUMENT', 'this viewer serves no run directories (benchgym view DIR serves them)');
    return sources.runs;
  };

  router.get(
    '/api/info',
    api(() => ({ runs: sources.runs?.ids().length ?? 0, live: Boolean(sources.live) })),
  );
  router.get(
    '/api/runs',
    api(async () => ({ runs: sources.runs ? await sources.runs.list() : [] })),
  );
  router.get(
    '/api/runs/:run',
    api(async (req) => {
      const run = await runs().get(String(req.params.run));
      const { options, settings, taskIds, resumed, runId } = run.manifest;
      const { baseURL: _b, ...shown } = options ?? {};
      return { summary: summarize(run), runId, options: shown, settings, tasks: taskIds?.length ?? 0, resumed, facets: run.facets };
    }),
  );
  router.get(
    '/api/runs/:run/results',
    api(async (req) => {
      const id = String(req.params.run);
      const run = await runs().get(id);
      return tableOf(id).page(run.rows, parseResultQuery(req.query as Record<string, unknown>));
    }),
  );
  router.get(
    '/api/runs/:run/tasks/:task',
    api(async (req) => {
      const run = await runs().get(String(req.params.run));
      const task = String(req.params.task);
      return { rows: run.rows.filter((r) => r.task === task).sort((a, b) => a.sample - b.sample) };
    }),
  );
  const pair = async (req: Request) => {
    const run = await runs().get(String(req.params.run));
    const task = String(req.params.task);
    const sample = sampleOf(req);
    const attempts = run.attempts.get(pairKey(task, sample)) ?? [];
    const runningFile = run.running.get(pairKey(task, sample));
    if (!attempts.length && !runningFile)
      throw new GymError('TASK_NOT_FOUND', `run '${run.id}' has no result for task '${task}' sample ${sample}`);
    const row = run.rows.find((r) => r.task === task && r.sample === sample) ?? null;
    const files: TranscriptFiles = { gym: new Map() };
    for (const a of attempts) {
      if (a.gymTrajectory && isGymTrajectoryPath(a.gymTrajectory)) files.gym!.set(a.attempt, a.gymTrajectory);
    }
    const last = attempts.length && !runningFile ? attempts[attempts.length - 1]! : undefined;
    // A trajectory named by a result line is read only inside its run directory.
    const rel = last?.trajectory ?? runningFile;
    const agent = rel ? path.resolve(run.dir, rel) : undefined;
    if (agent && !path.relative(run.dir, agent).startsWith('..') && !path.isAbsolute(path.relative(run.dir, agent))) files.agent = agent;
    return { run, row, attempts, files, last };
  };
  router.get(
    '/api/runs/:run/tasks/:task/:sample',
    api(async (req) => {
      const { run, row, attempts, last } = await pair(req);
      const task = String(req.params.task);
      return {
        run: run.id,
        agent: run.manifest.agent,
        model: run.manifest.model,
        row,
        priced: Boolean(run.manifest.options?.pricing),
        episodeId: last?.episodeId ?? null,
        notes: last?.notes ?? [],
        attempts: attempts.map((a) => ({
          attempt: a.attempt,
          final: a.final,
          status: a.status,
          episodeId: a.episodeId,
          infraError: a.infraError ? `${a.infraError.code}: ${a.infraError.message}` : null,
          startedAt: a.startedAt,
        })),
        samples: run.rows
          .filter((r) => r.task === task)
          .map((r) => r.sample)
          .sort((a, b) => a - b),
      };
    }),
  );
  // A (task, sample)'s attempt as an ATIF file to save (the last attempt unless ?attempt=N).
  router.get('/api/runs/:run/tasks/:task/:sample/atif', async (req: Request, res: Response) => {
    try {
      const { run, attempts } = await pair(req);
      const wanted = req.query.attempt === undefined ? undefined : Number(req.query.attempt);
      const result = wanted === undefined ? attempts[attempts.length - 1] : attempts.find((a) => a.attempt === wanted);
      if (!result) {
        const known = attempts.map((a) => a.attempt).join(', ');
        const message =
          wanted === undefined
            ? 'no attempt of this (task, sample) has ended yet'
            : `no attempt ${String(req.query.attempt)} of this (task, sample) (attempts: ${known})`;
        throw new GymError('TASK_NOT_FOUND', message);
      }
      download(res, atifFileName(result.task, result.sample, result.attempt), await atifOfAttempt(run.dir, run.manifest, result));
    } catch (err) {
      failed(res, err);
    }
  });
  router.get(
    '/api/runs/:run/tasks/:task/:sample/items',
    api(async (req) => {
      const { files, last } = await pair(req);
      const q = itemsQuery(req);
      const page = await transcriptPage(index, files, q.from, q.limit);
      // The runner writes a pair's result line after its trajectory: a final result means nothing more is coming.
      return { ...page, done: page.done || Boolean(last?.final) };
    }),
  );

  const live = () => {
    if (!sources.live) throw new GymError('INVALID_ARGUMENT', 'live episodes are shown by the viewer of benchgym serve (its /view/ page)');
    return sources.live;
  };
  router.get(
    '/api/live',
    api(() => ({ episodes: sources.live ? sources.live.list() : [], available: Boolean(sources.live) })),
  );
  router.get(
    '/api/live/:id',
    api((req) => {
      const id = String(req.params.id);
      const episode = live()
        .list()
        .find((e) => e.id === id);
      if (!episode) throw new GymError('EPISODE_NOT_FOUND', `no episode '${id}' (it may have expired)`);
      return { episode };
    }),
  );
  router.get(
    '/api/live/:id/items',
    api(async (req) => {
      const id = String(req.params.id);
      const t = live().trajectory(id);
      if (!t) throw new GymError('EPISODE_NOT_FOUND', `no episode '${id}' (it may have expired)`);
      const q = itemsQuery(req);
      const page = await transcriptPage(index, { gym: new Map([[1, t.file]]) }, q.from, q.limit);
      return { ...page, done: !t.running };
    }),
  );
  router.get('/api/live/:id/atif', async (req: Request, res: Response) => {
    try {
      const id = String(req.params.id);
      const t = live().trajectory(id);
      if (!t) throw new GymError('EPISODE_NOT_FOUND', `no episode '${id}' (it may have expired)`);
      download(res, `${id}.json`, await atifOfGymFile(t.file));
    } catch (err) {
      failed(res, err);
    }
  });
  router.use(
    '/api',
    api(() => {
      throw new GymError('INVALID_ARGUMENT', 'no such viewer API route');
    }),
  );
  router.use(viewerErrorHandler);
  return router;
}
