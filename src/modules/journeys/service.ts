// Journeys: saved checked (every fault of the nodes at once, with its field; the graph too once
// published), and moved through their life:
//   draft ──publish──▶ published ◀──publish── paused      (pause: published → paused)
//   any but archived ──archive──▶ archived                (its running and waiting runs are canceled)
// A draft is edited in place (its version stays 1). Publishing checks the graph, and the buttons
// its waits wait for against the messages before them (buttons.ts). A published or paused
// journey's edit is checked as a publish is and makes the next version, kept in journey_versions;
// runs keep the version they started on. A paused journey starts no run, and its runs hold where
// they are until it is published again. An archived journey is read-only. Only a draft or an
// archived journey may be deleted (with its runs). A journey owned by a journey config changes only
// through it (`owner: 'config'`).

import type { TemplateComponent } from '../../channels/types.ts';
import type { SecretBox } from '../../kernel/crypto/secrets.ts';
import type { Database, Sql, Tx } from '../../kernel/database/db.ts';
import { conflict } from '../../kernel/http/errors.ts';
import type { Egress } from '../../kernel/outbound/egress.ts';
import type { EventOutbox } from '../../kernel/outbox/events.ts';
import { newId } from '../../kernel/values/ids.ts';
import type { Conditions, SendWindow } from '../automation/index.ts';
import { refreshInterest } from '../automation/index.ts';
import { invalidFields } from '../contacts/index.ts';
import { findMember } from '../team/index.ts';
import { findTemplateByName } from '../templates/index.ts';
import { callableScriptProblem } from '../voice-scripts/index.ts';
import { generateSecret } from '../webhooks/index.ts';
import { buttonProblems } from './buttons.ts';
import { type Definition, graphProblems, type JourneyNode, type Reentry } from './graph.ts';
import { definitionProblems } from './nodes.ts';
import { JOURNEYS, type JourneyRow, type Move } from './repo.ts';

export { MAX_JOURNEYS_PER_ACCOUNT, type Move } from './repo.ts';

export interface JourneyServices {
  db: Database;
  egress: Egress;
  events: EventOutbox;
  secrets: SecretBox;
  now: () => Date;
}

export interface JourneyInput {
  name: string;
  description?: string | null;
  entry: {
    trigger: 'api' | 'event';
    event?: string;
    after?: string;
    conditions?: Conditions;
    reentry?: Reentry;
    start: string;
  };
  nodes: { id: string; type: string; config?: Record<string, unknown> }[];
  edges: { from: string; to: string; when?: string }[];
  settings?: { sendWindow?: SendWindow | null; maxRunDuration?: string };
}

/** Who changes a journey: its API, or the journey config that owns it. */
export type Owner = 'api' | 'config';

/** A journey as saved, with its signing secret when this write made it (shown once). */
export interface SavedJourney {
  row: JourneyRow;
  signingSecret?: string;
}

/** The definition as stored: defaults filled in. */
export function definitionOf(input: Omit<JourneyInput, 'name'>, before?: Definition): Definition {
  const settings = input.settings ?? before?.settings;
  return {
    entry: {
      trigger: input.entry.trigger,
      ...(input.entry.event ? { event: input.entry.event } : {}),
      ...(input.entry.after !== undefined ? { after: input.entry.after } : {}),
      ...(input.entry.conditions ? { conditions: input.entry.conditions } : {}),
      reentry: input.entry.reentry ?? 'never',
      start: input.entry.start,
    },
    nodes: input.nodes.map((n) => ({ id: n.id, type: n.type, config: n.config ?? {} }) as JourneyNode),
    edges: input.edges.map((e) => ({ from: e.from, to: e.to, when: e.when ?? 'next' })),
    settings: {
      sendWindow: settings?.sendWindow ?? null,
      maxRunDuration: settings?.maxRunDuration ?? 'P30D',
    },
  };
}

/** Every fault of the journey as saved; with the graph's when it is (or is to be) published. */
async function check(
  s: JourneyServices,
  sql: Sql,
  accountId: string,
  name: string,
  d: Definition,
  published: boolean,
): Promise<void> {
  const issues = await definitionProblems(name, d, {
    egress: s.egress,
    memberExists: async (id) => (await findMember(sql, accountId, id)) !== null,
    scriptProblem: (id) => callableScriptProblem(sql, accountId, id),
  });
  if (published) {
    issues.push(...graphProblems(d));
    // One read per template, however many nodes send it.
    const templates = new Map<string, Promise<TemplateComponent[] | null>>();
    const componentsOf = (name: string, language: string) => {
      const key = `${name}\u0000${language}`;
      if (!templates.has(key)) {
        templates.set(
          key,
          findTemplateByName(sql, accountId, name, language).then((t) => t?.components ?? null),
        );
      }
      return templates.get(key)!;
    };
    issues.push(...(await buttonProblems(d, componentsOf)));
  }
  if (issues.length > 0) throw invalidFields(issues);
}

export async function createJourney(
  s: JourneyServices,
  accountId: string,
  input: JourneyInput,
  options: { configId?: string; tx?: Tx } = {},
): Promise<SavedJourney> {
  const definition = definitionOf(input);
  const work = async (tx: Tx): Promise<SavedJourney> => {
    await check(s, tx, accountId, input.name, definition, false);
    await JOURNEYS.reserve(tx, accountId);
    const signingSecret = generateSecret();
    const row = await JOURNEYS.insert(
      tx,
      {
        id: newId('journey'),
        account_id: accountId,
        name: input.name.trim(),
        description: input.description ?? null,
        definition,
        config_id: options.configId ?? null,
        signing_secret_sealed: s.secrets.seal(signingSecret),
      },
      s.now(),
    );
    return { row, signingSecret };
  };
  return options.tx ? work(options.tx) : s.db.transaction(work);
}

export function getJourney(db: Sql, accountId: string, id: string): Promise<JourneyRow> {
  return JOURNEYS.get(db, accountId, id);
}

async function lockedJourney(tx: Tx, accountId: string, id: string, owner: Owner): Promise<JourneyRow> {
  const row = await JOURNEYS.locked(tx, accountId, id);
  if (owner === 'api' && row.config_id) {
    throw conflict(`The journey belongs to journey config ${row.config_id}: change it there.`);
  }
  return row;
}

export async function patchJourney(
  s: JourneyServices,
  accountId: string,
  id: string,
  patch: Partial<JourneyInput>,
  options: { owner?: Owner; tx?: Tx } = {},
): Promise<JourneyRow> {
  const work = async (tx: Tx) => {
    const before = await lockedJourney(tx, accountId, id, options.owner ?? 'api');
    JOURNEYS.refuseArchived(before);
    const name = patch.name ?? before.name;
    const d = before.definition;
    const definition = definitionOf(
      {
        entry: patch.entry ?? d.entry,
        nodes: patch.nodes ?? d.nodes,
        edges: patch.edges ?? d.edges,
        settings: patch.settings,
      },
      d,
    );
    const published = before.status !== 'draft';
    await check(s, tx, accountId, name, definition, published);
    const row = await JOURNEYS.edit(
      tx,
      before,
      {
        name: name.trim(),
        description: patch.description === undefined ? before.description : patch.description,
        definition,
      },
      () => s.now(),
    );
    if (published) await refreshInterest(tx, accountId);
    return row;
  };
  return options.tx ? work(options.tx) : s.db.transaction(work);
}

export async function moveJourney(
  s: JourneyServices,
  accountId: string,
  id: string,
  move: Move,
  options: { owner?: Owner; tx?: Tx } = {},
): Promise<JourneyRow> {
  const work = async (tx: Tx) => {
    const before = await lockedJourney(tx, accountId, id, options.owner ?? 'api');
    const to = JOURNEYS.moveTo(before, move);
    if (move === 'publish' && before.status === 'draft') {
      await check(s, tx, accountId, before.name, before.definition, true);
    }
    const row = await JOURNEYS.update(tx, id, { ...before, status: to }, s.now());
    if (move === 'publish' && before.status === 'draft') await JOURNEYS.keepVersion(tx, row, s.now());
    if (move === 'archive') await cancelRuns(tx, id, s.now());
    await refreshInterest(tx, accountId);
    return row;
  };
  return options.tx ? work(options.tx) : s.db.transaction(work);
}

/** Cancels a journey's running and waiting runs (it was archived), with their waiting steps. */
async function cancelRuns(tx: Tx, journeyId: string, now: Date): Promise<void> {
  const error = JSON.stringify({ code: 'JOURNEY_ARCHIVED', message: 'The journey was archived.' });
  await tx.query(
    `UPDATE journey_run_steps s SET status = 'canceled', ended_at = $2
       FROM journey_runs r
      WHERE r.journey_id = $1 AND r.status IN ('running', 'waiting') AND s.run_id = r.id AND s.status = 'waiting'`,
    [journeyId, now],
  );
  await tx.query(
    `UPDATE journey_runs SET status = 'canceled', error = $3, resume_at = NULL, resume_edge = NULL,
                             updated_at = $2, ended_at = $2
      WHERE journey_id = $1 AND status IN ('running', 'waiting')`,
    [journeyId, now, error],
  );
}

export async function removeJourney(
  s: JourneyServices,
  accountId: string,
  id: string,
  options: { owner?: Owner; tx?: Tx } = {},
): Promise<void> {
  const work = async (tx: Tx) => {
    const before = await lockedJourney(tx, accountId, id, options.owner ?? 'api');
    await JOURNEYS.remove(tx, before);
    await refreshInterest(tx, accountId);
  };
  await (options.tx ? work(options.tx) : s.db.transaction(work));
}
