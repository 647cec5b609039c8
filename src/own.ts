/**
 * `record[name]` when `name` is one of the record's own keys, else undefined. Every lookup of a
 * name that comes from outside (a suite, task, context, prompt variant, agent, asset...) goes
 * through this or a Map: a plain object answers `constructor`, `__proto__` or `toString` with
 * an inherited member, which then passes for a found entry.
 *
 * @example
 * ownValue(task.contexts, 'constructor') // undefined, not Object
 */
export function ownValue<T>(record: Readonly<Record<string, T>> | null | undefined, name: string): T | undefined {
  return record != null && Object.hasOwn(record, name) ? record[name] : undefined;
}
