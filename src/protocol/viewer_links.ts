/**
 * Addresses of the run viewer (`benchgym view`), shared by the viewer and everything that
 * links into it (the report's per-sample links, `serve`'s banner). The viewer is one page
 * whose routes live in the URL's fragment, so a link works from a file (report.html) as well
 * as from the page itself.
 *
 *   #/                                  the run list
 *   #/run/<run>                         one run's table of (task, sample)
 *   #/run/<run>/task/<task>/<sample>    one (task, sample) as a transcript
 *   #/compare/<runA>/<runB>/task/<task> two runs side by side on one task
 *   #/live                              episodes in progress (when served by `benchgym serve`)
 *   #/live/<episode>                    one of them as a transcript, growing as its steps arrive
 *
 * `<run>` is the run's id in the viewer: its directory's base name (see `runId`). A run's
 * table keeps its view in a query after the route (`#/run/<run>?status=failed&m.library=numpy
 * &sort=steps&dir=desc&offset=100&compare=<runB>`), and the compare view its samples
 * (`?a=<sample>&b=<sample>`), so any view can be bookmarked.
 */

/** The port `benchgym view` listens on unless told otherwise (on 127.0.0.1). */
export const DEFAULT_VIEW_PORT = 7700;

/** The viewer's base address on this machine, by default. */
export const DEFAULT_VIEW_URL = `http://127.0.0.1:${DEFAULT_VIEW_PORT}/`;

/** A run directory's id in the viewer: its base name, made safe for a URL path segment. */
export function runId(runDir: string): string {
  const base =
    runDir
      .replace(/[\\/]+$/, '')
      .split(/[\\/]/)
      .pop() || 'run';
  return base.replace(/[^A-Za-z0-9._-]+/g, '_');
}

const seg = (s: string | number) => encodeURIComponent(String(s));

export function runLink(run: string, base = DEFAULT_VIEW_URL): string {
  return `${base}#/run/${seg(run)}`;
}

export function sampleLink(run: string, task: string, sample: number, base = DEFAULT_VIEW_URL): string {
  return `${base}#/run/${seg(run)}/task/${seg(task)}/${seg(sample)}`;
}

export function compareLink(runA: string, runB: string, task: string, base = DEFAULT_VIEW_URL): string {
  return `${base}#/compare/${seg(runA)}/${seg(runB)}/task/${seg(task)}`;
}

export function liveLink(episodeId: string, base = DEFAULT_VIEW_URL): string {
  return `${base}#/live/${seg(episodeId)}`;
}
