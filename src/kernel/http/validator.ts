// Request validation whose cost stays that of the input. Ajv's `allErrors` reports every fault of a
// body at once, which a developer fixing a request wants; but it makes an error object for every
// failing value, without limit, and the formatters then walk them all: a 1 MiB body of wrong values
// made 2.6 million errors (1.6 s and 380 MiB inside Ajv alone; Ajv's own documentation and CodeQL
// warn against `allErrors` on untrusted input). So a value is checked first by a validator that
// stops at its first fault (the usual, valid request pays nothing more); only a refused value of at
// most FULLY_CHECKED_VALUES JSON values is checked again for all its faults, which bounds their
// number by that many times the schema's branches. A larger refused value is answered with its
// first fault.
import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

/** A refused value of at most this many JSON values (each scalar, array and object) has all its faults listed. */
export const FULLY_CHECKED_VALUES = 1_000;

/** Whether `data` holds at most `limit` JSON values; stops counting there (and never recurses). */
export function valuesAtMost(data: unknown, limit: number): boolean {
  const pending: unknown[] = [data];
  let found = 1;
  while (pending.length > 0) {
    const value = pending.pop();
    if (value === null || typeof value !== 'object') continue;
    const items = Array.isArray(value) ? value : Object.values(value);
    found += items.length;
    if (found > limit) return false;
    for (const item of items) pending.push(item);
  }
  return found <= limit;
}

/** Where the value sits (Fastify passes the request, so that Ajv may coerce the value itself). */
type DataContext = Parameters<ValidateFunction>[1];

/** Ajv's validate function, as Fastify and the modules call it. */
export interface CheckFunction {
  (data: unknown, dataCxt?: DataContext): boolean;
  errors?: ErrorObject[] | null;
  /** Present on Ajv's functions; Fastify passes the parent (for root coercion) when it is. */
  schemaEnv?: unknown;
  /** Whether the value is valid, without listing its faults. */
  passes: (data: unknown) => boolean;
}

/**
 * Validators of one set of Ajv options, compiled in the two passes above. The one listing every
 * fault is compiled when a value is first refused (most of a server's schemas never need it, and a
 * test suite builds hundreds of servers), or at once with `eager` (a module's own validators, made
 * once per process: the first refusal then does not pay for a compilation).
 */
export function boundedValidators(
  options: Options,
  { eager = false } = {},
): (schema: object) => CheckFunction {
  const firstFault = addFormats.default(new Ajv({ ...options, allErrors: false }));
  const everyFault = addFormats.default(new Ajv({ ...options, allErrors: true }));
  return (schema) => {
    const first = firstFault.compile(schema);
    let every = eager ? everyFault.compile(schema) : null;
    const check = ((data, dataCxt) => {
      if (first(data, dataCxt)) {
        check.errors = null;
        return true;
      }
      check.errors = first.errors;
      if (valuesAtMost(data, FULLY_CHECKED_VALUES)) {
        every ??= everyFault.compile(schema);
        every(data, dataCxt);
        check.errors = every.errors ?? first.errors;
      }
      return false;
    }) as CheckFunction;
    check.schemaEnv = first.schemaEnv;
    check.passes = (data) => first(data);
    return check;
  };
}
