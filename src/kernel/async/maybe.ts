// A value now, or a promise of it: what the request path's steps answer (access.ts). A step that has
// its answer at hand (a cached key, the in-process limiter, a quota lease) returns it without a
// promise, and its caller goes on in the same turn: each await costs a turn of the microtask queue.
export type Maybe<T> = T | Promise<T>;

/** `next` of a value at once, or of a promise's value when it settles. */
export function andThen<T, R>(value: Maybe<T>, next: (value: T) => Maybe<R>): Maybe<R> {
  return value instanceof Promise ? value.then(next) : next(value);
}
