// In-transaction hooks: how a lower module lets the modules above it react to a change, in the
// change's own transaction, without importing them (docs/architecture.md § The stack). The module
// that makes the change declares its hooks by augmenting `HookPayloads` beside the code that runs
// them; the modules that react subscribe at composition (app.ts). Like the outbox's subscribers,
// and carried by the outbox (`events.hook(…)` runs one), so every service that emits can run them.
//
// Handlers run in the order they were subscribed, one after another, in the caller's transaction:
// a handler that throws fails the change, as the direct call it replaces did. A hook nobody
// subscribed to does nothing.
import type { Tx } from '../database/db.ts';
import type { EventOutbox } from './events.ts';

/** Each hook's name and what it is given; modules add theirs with `declare module`. */
// biome-ignore lint/suspicious/noEmptyInterface: filled in by declaration merging
export interface HookPayloads {}

export type HookName = keyof HookPayloads;
/** `events` is the outbox the change emits through (with its cause, when automation made it). */
export type HookHandler<K extends HookName> = (
  tx: Tx,
  payload: HookPayloads[K],
  events: EventOutbox,
) => Promise<void>;

export class Hooks {
  readonly #handlers = new Map<HookName, HookHandler<HookName>[]>();

  on<K extends HookName>(name: K, handler: HookHandler<K>): void {
    const list = this.#handlers.get(name) ?? [];
    list.push(handler as unknown as HookHandler<HookName>);
    this.#handlers.set(name, list);
  }

  async run<K extends HookName>(
    tx: Tx,
    name: K,
    payload: HookPayloads[K],
    events: EventOutbox,
  ): Promise<void> {
    const list = this.#handlers.get(name);
    if (!list) return;
    for (const handler of list) await handler(tx, payload, events);
  }
}
