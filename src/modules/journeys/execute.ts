// Executing a run's nodes during a turn of the runner (runner.ts), in the batch's transaction: each
// node type's effect or decision, the resumption of a run whose wait ended, and the rounds in which
// the runs' messages are accepted together. Where a run goes next is the Walk's bookkeeping (walk.ts).
import type { Tx } from '../../kernel/database/db.ts';
import type { CausedBy } from '../../kernel/outbox/events.ts';
import {
  type Action,
  type Actor,
  actor as actionsOf,
  automatedSendsLastHour,
  bodyBudget,
  type ConversationRef,
  contactChange,
  durationMs,
  type EffectServices,
  failureOf,
  markCausedBy,
  nextOpening,
  queueCall,
  renderMessage,
  renderWhole,
  runActions,
  scopeOf,
  windowZone,
} from '../automation/index.ts';
import { NO_PHONE, placeCallIn } from '../calls/index.ts';
import type { ContactRow } from '../contacts/index.ts';
import { contactCountry, recipientOf } from '../contacts/index.ts';
import type { MessageFieldsInput } from '../messages/index.ts';
import {
  acceptBatch,
  prepareMessage,
  type SendRequest,
  type SendResult,
  templateLookup,
} from '../messages/index.ts';
import { missingButtons, offeredIds } from './buttons.ts';
import { conditionEdge, type JourneyScope, splitEdge, switchEdge, waitEnd } from './decide.ts';
import { type JourneyNode, LATE_MS } from './graph.ts';
import type { StepRow } from './repo.ts';
import type { Walk } from './walk.ts';

/** What a turn shares: the services, the batch's reads, the sends accepted. */
export interface Turn {
  tx: Tx;
  s: EffectServices;
  now: Date;
  sent: SendResult[];
  contacts: Map<string, ContactRow>;
  conversations: Map<string, ConversationRef>;
  events: Map<string, { id: string; type: string; data: Record<string, unknown> }>;
}

/** A run in the turn: its walk, and what it acts with. */
export interface Going {
  walk: Walk;
  actor: Actor;
  causedBy: CausedBy;
}

function scopeFor(t: Turn, g: Going): JourneyScope {
  const run = g.walk.run;
  const event = (run.trigger_event_id && t.events.get(run.trigger_event_id)) || {
    id: run.id,
    type: 'journey.triggered',
    data: run.trigger_data,
  };
  const scope = scopeOf(
    t.contacts.get(run.contact_id) ?? null,
    t.conversations.get(run.contact_id) ?? null,
    event,
    t.now,
  );
  return { ...scope, run: { vars: run.vars }, trigger: { data: run.trigger_data } };
}

/** Reads the contact and its latest conversation again (an update_contact or assign changed them). */
export async function reread(t: Turn, accountIds: string[], contactIds: string[]): Promise<void> {
  const { rows: contacts } = await t.tx.query<ContactRow>('SELECT * FROM contact_rows WHERE id = ANY($1)', [
    contactIds,
  ]);
  for (const id of contactIds) t.contacts.delete(id);
  for (const c of contacts) t.contacts.set(c.id, c);
  // By account too: the conversations' indexes start with it.
  const { rows: conversations } = await t.tx.query<ConversationRef & { contact_id: string }>(
    `SELECT DISTINCT ON (contact_id) contact_id, id, status, assignee_id FROM conversations
      WHERE account_id = ANY($1) AND contact_id = ANY($2) ORDER BY contact_id, opened_at DESC`,
    [accountIds, contactIds],
  );
  for (const c of conversations) t.conversations.set(c.contact_id, c);
}

/** Runs actions of the action set through the services (update_contact, assign). */
async function act(t: Turn, g: Going, step: StepRow, actions: Action[]): Promise<void> {
  const results = await runActions(t.tx, actions, actionsOf(t.s, t.sent), {
    scope: scopeFor(t, g),
    actor: g.actor,
    causedBy: g.causedBy,
    keyPrefix: `jrn:${g.walk.run.id}:${step.seq}`,
  });
  await reread(t, [g.walk.run.account_id], [g.walk.run.contact_id]);
  const failed = results.find((r) => r.status !== 'succeeded');
  if (failed) {
    g.walk.leave(step, 'failed', {
      error: failed.error ?? { code: 'ACTION_FAILED', message: `${failed.type} did not succeed.` },
    });
  } else g.walk.leave(step, 'next');
}

/** An update_contact node's changes: the contact's own fields first (one PATCH), then tags, attributes. */
function updateActions(config: Record<string, unknown>): Action[] {
  const c = config as {
    addTags?: string[];
    removeTags?: string[];
    setAttributes?: Record<string, string | number | boolean | null>;
  };
  const change = contactChange(config);
  return [
    ...(change ? [change] : []),
    ...(c.addTags ?? []).map((tag) => ({ type: 'add_tag', tag })),
    ...(c.removeTags ?? []).map((tag) => ({ type: 'remove_tag', tag })),
    ...Object.entries(c.setAttributes ?? {}).map(([key, value]) => ({ type: 'set_attribute', key, value })),
  ];
}

/** A send_message node: sent in this round's batch, or waiting for the send window to open. */
function sendOrWait(t: Turn, g: Going, step: StepRow): void {
  const window = g.walk.definition.settings.sendWindow;
  if (window) {
    const contact = t.contacts.get(g.walk.run.contact_id);
    const where = contact ? { attributes: contact.attributes, country: contactCountry(contact) } : null;
    const opening = nextOpening(t.now, window, windowZone(window, where));
    if (opening > t.now) {
      g.walk.wait(step, opening, { sendWindowOpensAt: opening.toISOString() });
      return;
    }
  }
  g.walk.sending = step;
}

/** Executes the node the run just entered. */
async function execute(t: Turn, g: Going, node: JourneyNode, step: StepRow): Promise<void> {
  const w = g.walk;
  switch (node.type) {
    case 'end':
      w.leave(step, 'end');
      return;
    case 'condition':
      w.leave(step, conditionEdge(node, scopeFor(t, g)).edge);
      return;
    case 'switch': {
      const { edge, output } = switchEdge(node, scopeFor(t, g));
      w.leave(step, edge, { output });
      return;
    }
    case 'split':
      w.leave(step, splitEdge(node, w.run.id).edge);
      return;
    case 'wait': {
      const end = waitEnd(node, scopeFor(t, g), t.now);
      if ('error' in end) w.leave(step, 'failed', { error: { code: 'NO_DATE', message: end.error } });
      else if (end > t.now) w.wait(step, end, { until: end.toISOString() });
      else {
        const late = t.now.getTime() - end.getTime() > LATE_MS && w.hasEdge(node.id, 'late');
        w.leave(step, late ? 'late' : 'next', { output: { until: end.toISOString() } });
      }
      return;
    }
    case 'wait_for_reply': {
      const until = new Date(t.now.getTime() + durationMs(node.config.timeout as string));
      w.run.resume_edge = null;
      w.wait(step, until, { until: until.toISOString() });
      return;
    }
    case 'send_message':
      sendOrWait(t, g, step);
      return;
    case 'update_contact':
      await act(t, g, step, updateActions(node.config));
      return;
    case 'assign':
      await act(t, g, step, [{ type: 'assign', ...node.config }]);
      return;
    case 'webhook': {
      const c = node.config as { url: string; body?: Record<string, unknown> };
      try {
        const body = c.body ? await renderWhole(c.body, scopeFor(t, g), bodyBudget()) : {};
        const callId = await queueCall(
          t.tx,
          {
            accountId: w.run.account_id,
            journeyId: w.run.journey_id,
            nodeId: node.id,
            runId: w.run.id,
            url: c.url,
            // The run is added to the body (it wins over a key of the same name).
            payload: {
              ...body,
              run: {
                id: w.run.id,
                journeyId: w.run.journey_id,
                nodeId: node.id,
                contactId: w.run.contact_id,
              },
            },
          },
          t.now,
        );
        w.run.resume_edge = null;
        // It waits for the call's outcome (the sender makes it due), at the latest until it expires.
        w.wait(step, w.run.expires_at, { callId });
      } catch (err) {
        w.leave(step, 'failed', { error: failureOf(err) });
      }
      return;
    }
    case 'place_call': {
      const contact = t.contacts.get(w.run.contact_id);
      if (!contact) {
        w.leave(step, 'failed', {
          error: { code: 'RESOURCE_NOT_FOUND', message: 'The contact was deleted.' },
        });
        return;
      }
      // No number to call: on by the edge of a call that could not be made, not an error of the run.
      if (!contact.phone) {
        w.leave(step, 'failed', { output: { skipped: true, reason: NO_PHONE.code } });
        return;
      }
      try {
        const call = await placeCallIn(
          t.tx,
          { ...t.s, events: t.s.events.withCause(g.causedBy) },
          w.run.account_id,
          { ...contact, phone: contact.phone },
          {
            scriptId: node.config.scriptId as string,
            variables: { run: { id: w.run.id, vars: w.run.vars } },
          },
          { sandbox: w.run.sandbox, causedBy: g.causedBy, journeyNodeId: node.id },
        );
        w.run.resume_edge = null;
        // It waits for the call's end (status.ts makes it due with the edge), at the latest until it expires.
        w.wait(step, w.run.expires_at, { callId: call.id });
      } catch (err) {
        w.leave(step, 'failed', { error: failureOf(err) });
      }
      return;
    }
    default:
      w.leave(step, 'failed', {
        error: { code: 'NOT_AVAILABLE', message: `${node.type} nodes are not available in this release.` },
      });
  }
}

/** A waiting run whose time came: it leaves its node by the edge its wait ended with. */
function resume(t: Turn, g: Going): void {
  const w = g.walk;
  const step = w.open!;
  const node = w.node(step.node_id);
  const edge = w.run.resume_edge;
  w.run.resume_edge = null;
  switch (node?.type) {
    case 'wait':
      w.leave(step, 'next');
      return;
    case 'wait_for_reply':
      w.leave(step, edge ?? 'timeout');
      return;
    case 'place_call':
      if (!edge) w.wait(step, w.run.expires_at);
      else w.leave(step, edge, { output: w.run.vars[step.node_id] as object });
      return;
    case 'webhook': {
      if (!edge) {
        // Woken before its call ended (a sandbox wake): it goes on waiting for the call.
        w.wait(step, w.run.expires_at);
        return;
      }
      const answer = w.run.vars[step.node_id] as { status?: number | null; error?: string } | undefined;
      if (edge === 'next') w.leave(step, 'next', { output: { status: answer?.status ?? null } });
      else {
        w.leave(step, 'failed', {
          error: {
            code: 'WEBHOOK_FAILED',
            message: answer?.error ?? `The URL answered ${answer?.status ?? 'nothing'} to every attempt.`,
          },
        });
      }
      return;
    }
    case 'send_message':
      sendOrWait(t, g, step);
      return;
    default:
      w.end('failed', {
        code: 'NODE_NOT_FOUND',
        message: `The journey version has no node ${step.node_id}.`,
      });
  }
}

function buttonsMissing(message: MessageFieldsInput, missing: string[]): { code: string; message: string } {
  const what = message.templateName
    ? `Template ${message.templateName} (${message.templateLanguage})`
    : 'The message';
  const names = missing.map((b) => JSON.stringify(b)).join(', ');
  return {
    code: 'BUTTONS_MISSING',
    message: `${what} has no button ${names}, which the wait after it waits for: it changed since the journey was published.`,
  };
}

/** The round's messages, accepted together; each run goes on by next or failed. */
async function sendRound(t: Turn, going: Going[]): Promise<void> {
  const recent = await automatedSendsLastHour(
    t.tx,
    going.map((g) => g.walk.run.contact_id),
    t.now,
  );
  const requests: SendRequest[] = [];
  const owners: { g: Going; step: StepRow }[] = [];
  for (const g of going) {
    const step = g.walk.sending!;
    g.walk.sending = null;
    const run = g.walk.run;
    const contact = t.contacts.get(run.contact_id)!;
    const count = recent.get(run.contact_id) ?? 0;
    if (count >= t.s.contactCapPerHour) {
      g.walk.leave(step, 'failed', {
        error: {
          code: 'CONTACT_CAP',
          message: `The contact got ${t.s.contactCapPerHour} messages from automation in the last hour.`,
        },
      });
      continue;
    }
    const node = g.walk.node(step.node_id)!;
    try {
      const message = await renderMessage(node.config.message as MessageFieldsInput, scopeFor(t, g));
      const prepared = await prepareMessage(
        { ...message, ...recipientOf(contact) },
        {
          countryCode: g.actor.countryCode,
          lookup: templateLookup(t.tx, run.account_id, t.s.approvedTemplates),
        },
      );
      // The wait after it was checked against this message at publish; a template made or
      // changed since may lack the buttons it waits for.
      const missing = missingButtons(g.walk.definition, node.id, offeredIds(prepared.content));
      if (missing.length > 0) {
        g.walk.leave(step, 'failed', { error: buttonsMissing(message, missing) });
        continue;
      }
      requests.push({
        sender: {
          account: { id: run.account_id, channelProvider: g.actor.channelProvider },
          mode: g.actor.mode,
          // The step's message, at most once whatever happens.
          idempotencyKey: `jrn:${run.id}:${step.seq}`,
        },
        message: prepared,
      });
      owners.push({ g, step });
      recent.set(run.contact_id, count + 1);
    } catch (err) {
      g.walk.leave(step, 'failed', { error: failureOf(err) });
    }
  }
  const results = requests.length ? await acceptBatch(t.s, t.tx, requests) : [];
  const caused: { id: string; caused_by: CausedBy }[] = [];
  results.forEach((result, i) => {
    const { g, step } = owners[i]!;
    if (result.kind === 'refused') {
      g.walk.leave(step, 'failed', { error: { code: result.error.code, message: result.error.message } });
      return;
    }
    if (result.kind === 'accepted') {
      t.sent.push(result);
      caused.push({ id: result.message.id, caused_by: g.causedBy });
      g.walk.leave(step, 'next', { output: { messageId: result.message.id } });
    } else g.walk.leave(step, 'next');
  });
  await markCausedBy(t.tx, caused);
}

/** Walks every run until it stops: instant nodes at once, sends in rounds. */
export async function walkAll(t: Turn, going: Going[]): Promise<void> {
  for (const g of going) {
    const w = g.walk;
    if (w.run.status === 'waiting') resume(t, g);
  }
  for (;;) {
    for (const g of going) {
      const w = g.walk;
      while (!w.stopped && !w.sending) {
        const entered = w.enter();
        if (entered) await execute(t, g, entered.node, entered.step);
      }
    }
    const sending = going.filter((g) => g.walk.sending);
    if (sending.length === 0) return;
    await sendRound(t, sending);
  }
}
