// Business hours and the automatic replies they give (docs/conversations.md § Business hours and
// away messages). The setting is the account's one row (none: always open, no replies). The
// replies are sent by the automation worker for each customer message it takes (answerCustomer,
// after the rules of the same event): closed, the away message, at most once per conversation per
// `awayEvery`; open, the greeting, for a conversation's first customer message. Each is claimed on
// the conversation by one statement (conversations/auto-replies.ts), so it is sent once whichever
// worker runs the message; it goes through the send path (its price, its charge, its refusals: a
// wallet that cannot pay it sends nothing, and the period counts as answered).
import type { Tx } from '../../kernel/database/db.ts';
import { type FieldIssue, invalidRequest } from '../../kernel/http/errors.ts';
import type { EventEnvelope } from '../../kernel/outbox/events.ts';
import {
  type AccountActor,
  businessHoursProblems,
  durationMs,
  durationProblem,
  type EffectServices,
  isOpenAt,
  refreshInterest,
  sendInboxReply,
} from '../automation/index.ts';
import { findContact } from '../contacts/index.ts';
import { claimAwayReply, claimGreeting } from '../conversations/index.ts';
import { checkContent, type MessageFieldsInput, type SendResult } from '../messages/index.ts';
import { deleteHours, findHours, type HoursRow, writeHours } from './repo.ts';

const DEFAULT_EVERY = 'PT12H';
const MIN_EVERY_MS = 60_000;
const MAX_EVERY_MS = 30 * 86_400_000;

type Reply = { text: string } | { templateName: string; templateLanguage: string; parameters?: string[] };

export interface HoursInput {
  enabled?: boolean;
  timezone?: string;
  weekly?: HoursRow['weekly'];
  holidays?: string[];
  awayMessage?: Reply | null;
  awayEvery?: string;
  greeting?: Reply | null;
}

/** A reply as the send path takes it. */
function messageOf(reply: Reply | null | undefined): MessageFieldsInput | null {
  if (!reply) return null;
  return 'text' in reply ? { type: 'text', text: reply.text } : { type: 'template', ...reply };
}

const secondsOf = (iso: string) => durationMs(iso) / 1000;
/** Seconds as the shortest ISO-8601 duration that says them (PT4H, not PT14400S). */
function isoOf(seconds: number): string {
  if (seconds % 86_400 === 0) return `P${seconds / 86_400}D`;
  if (seconds % 3600 === 0) return `PT${seconds / 3600}H`;
  if (seconds % 60 === 0) return `PT${seconds / 60}M`;
  return `PT${seconds}S`;
}

export function toHours(row: HoursRow | null, now: Date) {
  const reply = (m: MessageFieldsInput | null) => {
    if (!m) return null;
    if (m.type === 'text') return { text: m.text! };
    return {
      templateName: m.templateName!,
      templateLanguage: m.templateLanguage!,
      parameters: m.parameters ?? [],
    };
  };
  if (!row)
    return {
      enabled: false,
      timezone: 'UTC',
      weekly: [],
      holidays: [],
      awayMessage: null,
      awayEvery: DEFAULT_EVERY,
      greeting: null,
      openNow: true,
      updatedAt: null,
    };
  return {
    enabled: true,
    timezone: row.timezone,
    weekly: row.weekly,
    holidays: row.holidays,
    awayMessage: reply(row.away_message),
    awayEvery: isoOf(row.away_every_seconds),
    greeting: reply(row.greeting),
    openNow: isOpenAt(row, now),
    updatedAt: row.updated_at.toISOString(),
  };
}

export async function putHours(
  s: { db: EffectServices['db']; now: () => Date },
  accountId: string,
  input: HoursInput,
) {
  const now = s.now();
  return s.db.transaction(async (tx) => {
    if (input.enabled === false) {
      await deleteHours(tx, accountId);
      await refreshInterest(tx, accountId);
      return toHours(null, now);
    }
    const issues: FieldIssue[] = [];
    if (input.timezone === undefined) issues.push({ field: 'timezone', issue: 'is required' });
    if (input.weekly === undefined) issues.push({ field: 'weekly', issue: 'is required' });
    const hours = {
      timezone: input.timezone ?? 'UTC',
      weekly: input.weekly ?? [],
      holidays: input.holidays ?? [],
    };
    if (input.timezone !== undefined) issues.push(...businessHoursProblems(hours));
    const every = input.awayEvery ?? DEFAULT_EVERY;
    const everyProblem = durationProblem(every);
    if (everyProblem) issues.push({ field: 'awayEvery', issue: everyProblem });
    else if (durationMs(every) < MIN_EVERY_MS || durationMs(every) > MAX_EVERY_MS)
      issues.push({ field: 'awayEvery', issue: 'must be from one minute to 30 days' });
    const away = messageOf(input.awayMessage);
    const greeting = messageOf(input.greeting);
    for (const [field, message] of [
      ['awayMessage', away],
      ['greeting', greeting],
    ] as const) {
      const found: FieldIssue[] = [];
      if (message) checkContent(message, found);
      issues.push(...found.map((f) => ({ ...f, field: `${field}.${f.field}` })));
    }
    if (issues.length > 0) throw invalidRequest(issues);
    const row = await writeHours(tx, {
      account_id: accountId,
      ...hours,
      away_message: away,
      away_every_seconds: secondsOf(every),
      greeting,
      updated_at: now,
    });
    // The automation inbox takes the account's customer messages while it has a reply to give.
    await refreshInterest(tx, accountId);
    return toHours(row, now);
  });
}

export async function getHours(s: { db: EffectServices['db']; now: () => Date }, accountId: string) {
  return toHours(await findHours(s.db, accountId), s.now());
}

/**
 * The away message or the greeting for a customer's message (a message.received event the worker
 * runs), in the worker's transaction; the accepted send joins `sent` (the dispatchers are woken
 * after the commit).
 */
export async function answerCustomer(
  s: EffectServices,
  tx: Tx,
  event: EventEnvelope,
  actor: AccountActor & { mode: 'live' | 'sandbox' },
  sent: SendResult[],
): Promise<void> {
  if (event.type !== 'message.received' || !event.accountId) return;
  const data = event.data as { id: string; conversationId: string | null; contactId: string | null };
  if (!data.conversationId || !data.contactId) return;
  const hours = await findHours(tx, event.accountId);
  if (!hours || (!hours.away_message && !hours.greeting)) return;
  const now = s.now();
  let reply: MessageFieldsInput | null = null;
  if (!isOpenAt(hours, now)) {
    if (
      hours.away_message &&
      (await claimAwayReply(tx, event.accountId, data.conversationId, now, hours.away_every_seconds * 1000))
    )
      reply = hours.away_message;
  } else if (
    hours.greeting &&
    (await claimGreeting(tx, event.accountId, data.conversationId, data.id, now))
  ) {
    reply = hours.greeting;
  }
  if (!reply) return;
  const contact = await findContact(tx, event.accountId, data.contactId);
  if (!contact) return;
  // One reply per customer message, whatever runs it again.
  await sendInboxReply(s, tx, { actor, contact }, reply, `auto-reply:${data.id}`, sent);
}
