// Running a rule's actions (and, next, journey nodes) inside the run's transaction, through the
// same service functions the API calls, so every guarantee of those paths holds: a message goes
// through the send path (window, price, charge, dispatch job), a tag through the contacts module
// (its event), a close or an assignment through the conversations module. Each action runs in a
// savepoint: one that fails is undone alone, recorded with its reason, and ends the run's actions.
// The services are given the run's transaction as their database (joinTransaction) and an outbox
// that marks every event they emit with the run as its cause.
import type { Database, Tx } from '../../kernel/database/db.ts';
import { ApiError } from '../../kernel/http/errors.ts';
import type { Jobs } from '../../kernel/jobs/jobs.ts';
import type { CausedBy, EventOutbox } from '../../kernel/outbox/events.ts';
import type { PriceTable } from '../pricing/index.ts';
import type { ApprovedTemplates } from '../templates/index.ts';
import type { Action } from './action-checks.ts';
import type { RunScope } from './context.ts';
import { TemplateError } from './templating.ts';

export interface EffectServices {
  db: Database;
  events: EventOutbox;
  jobs: Jobs;
  prices: PriceTable;
  approvedTemplates: ApprovedTemplates;
  now: () => Date;
  /** Automation-sent messages a contact may get in an hour. */
  contactCapPerHour: number;
  /** Told when an action started a journey run (due now): the worker's runner looks at once. */
  runsDue?: () => void;
  /** The actions of modules above automation, given by them in app.ts. */
  actions: OwnedActions;
}

export type ActionOutcome = Omit<ActionResult, 'type'>;

export const ok = (ref?: string): ActionOutcome =>
  ref ? { status: 'succeeded', ref } : { status: 'succeeded' };
export const failed = (code: string, message: string): ActionOutcome => ({
  status: 'failed',
  error: { code, message },
});

/** The action types whose work belongs to a module above automation. */
export type OwnedActionType = 'enroll_in_sequence' | 'exit_sequences' | 'trigger_journey' | 'place_call';

/** What an owned action is given: the run's transaction and services, about a known contact. */
export interface OwnedActionRun {
  action: Action;
  tx: Tx;
  /** The run's services: its transaction as their database, its outbox marking the run as cause. */
  services: EffectServices;
  /** Its phone, or (a customer without one) its WhatsApp user id: contacts/address.ts. */
  contact: { id: string; phone: string | null; whatsappUserId: string | null };
  account: { id: string; countryCode: string };
  actor: Actor;
  scope: RunScope;
  causedBy: CausedBy;
}

/** Each owned action's handler (sequences/owned-actions.ts, journeys/owned-actions.ts, calls/owned-actions.ts). */
export type OwnedActions = Partial<Record<OwnedActionType, (run: OwnedActionRun) => Promise<ActionOutcome>>>;

export interface ActionResult {
  type: string;
  status: 'succeeded' | 'failed' | 'skipped' | 'suppressed';
  error?: { code: string; message: string };
  /** What the action made or changed: a message id, a conversation id. */
  ref?: string;
}

/** The account an action acts for. */
export interface Actor {
  accountId: string;
  countryCode: string;
  channelProvider: 'sandbox' | 'whatsapp_cloud';
  /** Sends of a run started by a sandbox message go to the sandbox. */
  mode: 'live' | 'sandbox';
}

/** The run's transaction, as the database of services that open a transaction of their own. */
export function joinTransaction(tx: Tx, db: Database): Database {
  return {
    kind: db.kind,
    query: (text, params, options) => tx.query(text, params, options),
    exec: (text) => tx.exec(text),
    transaction: (work) => work(tx),
    listen: () => Promise.reject(new Error('not inside a run')),
    close: () => Promise.reject(new Error('not inside a run')),
  };
}

/** Automation-sent messages each contact got in the hour before `now` (the contact cap). */
export async function automatedSendsLastHour(
  tx: Tx,
  contactIds: string[],
  now: Date,
): Promise<Map<string, number>> {
  const { rows } = await tx.query<{ contact_id: string; n: number }>(
    `SELECT contact_id, count(*)::int AS n FROM messages
      WHERE contact_id = ANY($1) AND caused_by IS NOT NULL AND created_at > $2 GROUP BY contact_id`,
    [contactIds, new Date(now.getTime() - 3600_000)],
  );
  return new Map(rows.map((r) => [r.contact_id, r.n]));
}

/** Marks messages the send path accepted for automation with their cause (which the cap counts). */
export async function markCausedBy(tx: Tx, messages: { id: string; caused_by: CausedBy }[]): Promise<void> {
  if (messages.length === 0) return;
  await tx.query(
    `UPDATE messages m SET caused_by = r.caused_by, source = 'automation'
       FROM jsonb_to_recordset($1::jsonb) AS r (id text, caused_by jsonb) WHERE m.id = r.id`,
    [JSON.stringify(messages)],
  );
}

/** Why an action stopped, from what its service threw. */
export function failureOf(err: unknown): { code: string; message: string } {
  if (err instanceof ApiError) return { code: err.code, message: err.message };
  if (err instanceof TemplateError) return { code: 'TEMPLATE_RENDER_FAILED', message: err.message };
  throw err;
}

export type Act = (
  action: Action,
  ctx: { tx: Tx; scope: RunScope; actor: Actor; causedBy: CausedBy; key: string },
) => Promise<Omit<ActionResult, 'type'>>;

/**
 * Runs the actions in order, each in a savepoint; stops at the first that does not succeed (the
 * rest are `skipped`). Answers each action's result.
 */
export async function runActions(
  tx: Tx,
  actions: Action[],
  act: Act,
  ctx: { scope: RunScope; actor: Actor; causedBy: CausedBy; keyPrefix: string },
): Promise<ActionResult[]> {
  const results: ActionResult[] = [];
  let stopped = false;
  for (const [i, action] of actions.entries()) {
    if (stopped) {
      results.push({ type: action.type, status: 'skipped' });
      continue;
    }
    await tx.query('SAVEPOINT automation_action');
    try {
      const result = await act(action, { tx, ...ctx, key: `${ctx.keyPrefix}:${i}` });
      await tx.query('RELEASE SAVEPOINT automation_action');
      results.push({ type: action.type, ...result });
      if (result.status !== 'succeeded') stopped = true;
    } catch (err) {
      await tx.query('ROLLBACK TO SAVEPOINT automation_action');
      results.push({ type: action.type, status: 'failed', error: failureOf(err) });
      stopped = true;
    }
  }
  return results;
}
