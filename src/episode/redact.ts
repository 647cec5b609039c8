import path from 'node:path';
import { GymError, INFRA_CODES } from '../errors.ts';

/**
 * Replaces the server's own directories in text the agent is shown (infrastructure error
 * messages and details) with placeholders: where the sandboxes, caches, logs and the
 * benchgym checkout live is none of the agent's business. Paths the agent is told anyway
 * (its own workdir) are kept.
 */
export class PathRedactor {
  /** Longest first, so a sandbox inside the data dir becomes `<sandboxes>/...`, not `<data>/sandboxes/...`. */
  private readonly rules: { root: RegExp; placeholder: string }[];

  constructor(roots: { root: string | undefined; placeholder: string }[]) {
    this.rules = roots
      .flatMap(({ root, placeholder }) => (root && path.resolve(root) !== '/' ? [{ root: path.resolve(root), placeholder }] : []))
      .sort((a, b) => b.root.length - a.root.length)
      // A whole path component only: /srv/data, not the start of /srv/database.
      .map(({ root, placeholder }) => ({ root: new RegExp(`${escapeRegExp(root)}(?![\\w-]|\\.\\w)`, 'g'), placeholder }));
  }

  /** `text` with every server root replaced; the paths in `keep` (and what lies below them) stay as they are. */
  redact(text: string, keep: string[] = []): string {
    if (!this.rules.length || !text) return text;
    const kept: string[] = [];
    let out = text;
    for (const k of keep.filter(Boolean).sort((a, b) => b.length - a.length)) {
      out = out.split(k).join(`\u0000${kept.length}\u0000`);
      kept.push(k);
    }
    for (const { root, placeholder } of this.rules) out = out.replace(root, placeholder);
    return out.replace(/\u0000(\d+)\u0000/g, (_, i: string) => kept[Number(i)]!);
  }

  /** The error as the agent may see it: infrastructure errors redacted (message and string details), others untouched. */
  error(e: GymError, keep: string[] = []): GymError {
    if (!INFRA_CODES.has(e.code)) return e;
    const message = this.redact(e.message, keep);
    const details = e.details ? (this.value(e.details, keep) as Record<string, unknown>) : undefined;
    if (message === e.message && JSON.stringify(details) === JSON.stringify(e.details)) return e;
    return new GymError(e.code, message, details);
  }

  /** Strings anywhere in a JSON-like value, redacted. */
  value(v: unknown, keep: string[] = []): unknown {
    if (typeof v === 'string') return this.redact(v, keep);
    if (Array.isArray(v)) return v.map((x) => this.value(x, keep));
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, this.value(x, keep)]));
    return v;
  }
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
