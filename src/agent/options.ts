import { z } from 'zod';
import type { AgentDefinition } from './types.ts';

/** The option names an agent declares (its schema's keys), or undefined when its schema is not an object. */
export function knownOptionKeys(def: Pick<AgentDefinition, 'options'>): string[] | undefined {
  return def.options instanceof z.ZodObject ? Object.keys(def.options.shape) : undefined;
}

/**
 * Validates an agent's options: the parsed options, or one message naming each problem; an
 * unknown key is named with the keys the agent knows, whether or not its schema is strict.
 *
 * @example
 * const r = parseAgentOptions(sweAgent, { max_step: 3 }); // { ok: false, message: "unknown option 'max_step' (known: max_steps, ...)" }
 */
export function parseAgentOptions(
  def: Pick<AgentDefinition, 'options'>,
  options: unknown,
): { ok: true; options: unknown } | { ok: false; message: string } {
  const known = knownOptionKeys(def);
  const given = options && typeof options === 'object' && !Array.isArray(options) ? Object.keys(options) : [];
  const unknown = known ? given.filter((k) => !known.includes(k)) : [];
  const knownList = `(known: ${known?.length ? known.join(', ') : 'none'})`;
  const issues: string[] = unknown.length
    ? [`unknown option${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => `'${k}'`).join(', ')} ${knownList}`]
    : [];
  const parsed = def.options.safeParse(options ?? {});
  if (!parsed.success) {
    for (const i of parsed.error.issues) {
      if (i.code === 'unrecognized_keys') {
        if (!unknown.length)
          issues.push(`unknown option${i.keys.length > 1 ? 's' : ''} ${i.keys.map((k) => `'${k}'`).join(', ')} ${knownList}`);
      } else issues.push(`${i.path.join('.') || '(options)'}: ${i.message}`);
    }
  }
  if (issues.length) return { ok: false, message: issues.join('; ') };
  return { ok: true, options: parsed.success ? parsed.data : undefined };
}
