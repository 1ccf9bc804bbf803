// What an event does to journeys, inside the automation worker's transaction for that event
// (automation/worker.ts), after its rules ran:
//   - a message from a contact answers the runs of that contact that wait in a wait_for_reply node,
//     when it is the reply the node waits for (any message after the wait began, or a given button
//     or keyword): the reply is kept in `run.vars.<node>` and the run is due at once, to leave by
//     `reply` (the runner does the rest);
//   - an event starts runs of the published journeys it is the entry event of, their conditions
//     holding and their reentry allowing. An event caused by a journey's own run never starts that
//     journey, and a chain of automation deeper than the rules' bound starts nothing.
import type { Tx } from '../../kernel/database/db.ts';
import type { CausedBy, EventEnvelope } from '../../kernel/outbox/events.ts';
import { conditionContext, contactIdOf, evaluate, MAX_DEPTH, type RunScope } from '../automation/index.ts';
import { replyMatches } from './decide.ts';
import type { Definition } from './graph.ts';
import type { JourneyRow } from './repo.ts';
import { tryStart } from './start.ts';

type Event = EventEnvelope & { causedBy?: CausedBy };

/** Marks the contact's runs that wait for this message as answered; answers how many. */
export async function answerRuns(
  tx: Tx,
  s: { now: () => Date },
  event: Event,
  scope: () => Promise<RunScope>,
): Promise<number> {
  if (event.type !== 'message.received') return 0;
  const contactId = contactIdOf(event);
  if (!contactId) return 0;
  const { rows } = await tx.query<{ id: string; node_id: string; started_at: Date; definition: Definition }>(
    `SELECT r.id, st.node_id, st.started_at, v.definition
       FROM journey_runs r
       JOIN journey_run_steps st ON st.run_id = r.id AND st.seq = r.step_count
       JOIN journey_versions v ON v.journey_id = r.journey_id AND v.version = r.version
      WHERE r.account_id = $1 AND r.contact_id = $2 AND r.status = 'waiting' AND r.resume_edge IS NULL
        AND st.type = 'wait_for_reply' AND st.status = 'waiting'
      ORDER BY r.id FOR UPDATE OF r`,
    [event.accountId, contactId],
  );
  if (rows.length === 0) return 0;
  const { message } = await scope();
  const reply = {
    messageId: (event.data as { id: string }).id,
    text: message?.text ?? null,
    buttonId: message?.buttonId ?? null,
  };
  const at = new Date(event.createdAt);
  let answered = 0;
  for (const row of rows) {
    // A message from before the wait began does not answer it.
    if (at < new Date(row.started_at)) continue;
    const node = row.definition.nodes.find((n) => n.id === row.node_id);
    if (!node || !replyMatches(node, reply)) continue;
    await tx.query(
      `UPDATE journey_runs SET resume_edge = 'reply', resume_at = $2, updated_at = $2,
              vars = vars || jsonb_build_object($3::text, $4::jsonb)
        WHERE id = $1`,
      [row.id, s.now(), row.node_id, JSON.stringify(reply)],
    );
    answered++;
  }
  return answered;
}

/** Starts runs of the journeys the event is the entry of; answers how many started. */
export async function startOnEvent(
  tx: Tx,
  s: { now: () => Date },
  event: Event,
  scope: () => Promise<RunScope>,
): Promise<number> {
  const contactId = contactIdOf(event);
  const depth = event.causedBy?.depth ?? 0;
  if (!contactId || depth >= MAX_DEPTH) return 0;
  const { rows } = await tx.query<JourneyRow>(
    `SELECT * FROM journeys WHERE account_id = $1 AND trigger_event = $2 AND status = 'published' ORDER BY id`,
    [event.accountId, event.type],
  );
  let started = 0;
  for (const journey of rows) {
    if (event.causedBy?.kind === 'journey' && event.causedBy.id === journey.id) continue;
    const conditions = journey.definition.entry.conditions;
    if (conditions && !evaluate(conditions, conditionContext(await scope())).matched) continue;
    // A refusal (a run going, reentry never) is the journey's reentry at work, not a fault.
    const result = await tryStart(tx, s, journey, contactId, {
      sandbox: (event.data as { sandbox?: boolean }).sandbox === true,
      triggerEventId: event.id,
      triggerData: event.data as Record<string, unknown>,
      depth: depth + 1,
    });
    if ('run' in result) started++;
  }
  return started;
}
