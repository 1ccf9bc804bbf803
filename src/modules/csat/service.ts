// Customer satisfaction surveys (docs/conversations.md § CSAT). When a conversation is closed (a
// conversation.closed event the automation worker takes), the account's survey goes to its
// customer: an interactive message (three faces as reply buttons, or 1–5 as a list), claimed once
// for that close on the conversation (conversations/csat.ts), never to a contact who opted out
// (`marketingOptOut`: `optedIn` is false until someone sets it, so it says nothing of refusing),
// through the send path (free-form: inside the customer service window only; outside it, none is
// sent). The answer and the comment are stored by the inbound path (conversations/csat.ts) and told
// by csat.received; on that event this file sends what follows: the comment prompt (opening the
// 30-minute comment window), or the thanks. Each belongs to the closed conversation it is about
// (the customer's next conversation does not take it in).
import type { Tx } from '../../kernel/database/db.ts';
import type { EventEnvelope } from '../../kernel/outbox/events.ts';
import {
  type AccountActor,
  type EffectServices,
  refreshInterest,
  sendInboxReply,
} from '../automation/index.ts';
import { findContact } from '../contacts/index.ts';
import { claimSurvey, openCommentWindow, surveyOptionId } from '../conversations/index.ts';
import type { MessageFieldsInput, SendResult } from '../messages/index.ts';
import { type CsatRow, deleteCsat, findCsat, writeCsat } from './repo.ts';

const COMMENT_WINDOW_MS = 30 * 60_000;
const DEFAULT_QUESTION = 'How would you rate the help you got?';

export interface CsatInput {
  enabled?: boolean;
  scale?: CsatRow['scale'];
  question?: string;
  commentPrompt?: string | null;
  thanks?: string | null;
}

export function toCsat(row: CsatRow | null) {
  if (!row)
    return {
      enabled: false,
      scale: 'faces' as const,
      question: DEFAULT_QUESTION,
      commentPrompt: null,
      thanks: null,
      updatedAt: null,
    };
  return {
    enabled: true,
    scale: row.scale,
    question: row.question,
    commentPrompt: row.comment_prompt,
    thanks: row.thanks,
    updatedAt: row.updated_at.toISOString(),
  };
}

type Services = { db: EffectServices['db']; now: () => Date };

export async function getCsat(s: Services, accountId: string) {
  return toCsat(await findCsat(s.db, accountId));
}

export async function putCsat(s: Services, accountId: string, input: CsatInput) {
  return s.db.transaction(async (tx) => {
    if (input.enabled === false) {
      await deleteCsat(tx, accountId);
      await refreshInterest(tx, accountId);
      return toCsat(null);
    }
    const row = await writeCsat(tx, {
      account_id: accountId,
      scale: input.scale ?? 'faces',
      question: input.question ?? DEFAULT_QUESTION,
      comment_prompt: input.commentPrompt ?? null,
      thanks: input.thanks ?? null,
      updated_at: s.now(),
    });
    // The automation inbox takes the account's closes and answers while it surveys.
    await refreshInterest(tx, accountId);
    return toCsat(row);
  });
}

/** The survey's message for a conversation. */
function survey(setting: CsatRow, conversationId: string): MessageFieldsInput {
  const option = (score: number) => surveyOptionId(conversationId, score);
  if (setting.scale === 'faces') {
    return {
      type: 'interactive',
      interactive: {
        kind: 'buttons',
        body: setting.question,
        buttons: [
          { id: option(1), title: '😞 Poor' },
          { id: option(3), title: '😐 OK' },
          { id: option(5), title: '😊 Great' },
        ],
      },
    } as MessageFieldsInput;
  }
  const stars = (n: number) => `${'★'.repeat(n)}${'☆'.repeat(5 - n)}`;
  return {
    type: 'interactive',
    interactive: {
      kind: 'list',
      body: setting.question,
      buttonText: 'Rate',
      sections: [{ rows: [5, 4, 3, 2, 1].map((n) => ({ id: option(n), title: `${stars(n)} ${n}` })) }],
    },
  } as MessageFieldsInput;
}

/**
 * What the survey does with an event the worker runs: a close sends the survey; an answer sends
 * the comment prompt or the thanks. In the worker's transaction; accepted sends join `sent`.
 */
export async function surveyOnEvent(
  s: EffectServices,
  tx: Tx,
  event: EventEnvelope,
  actor: AccountActor & { mode: 'live' | 'sandbox' },
  sent: SendResult[],
): Promise<void> {
  if ((event.type !== 'conversation.closed' && event.type !== 'csat.received') || !event.accountId) return;
  const setting = await findCsat(tx, event.accountId);
  if (!setting) return;
  const data = event.data as {
    id: string;
    contactId: string;
    closedAt: string | null;
    csat: { score: number | null; comment: string | null } | null;
  };
  const contact = await findContact(tx, event.accountId, data.contactId);
  // A contact who stopped the business's messages (WhatsApp's opt-out) is not surveyed.
  if (!contact || contact.marketing_opt_out) return;
  const to = { actor, contact };
  if (event.type === 'conversation.closed') {
    if (!data.closedAt || !(await claimSurvey(tx, event.accountId, data.id, new Date(data.closedAt)))) return;
    await sendInboxReply(s, tx, to, survey(setting, data.id), `csat:${event.id}`, sent, data.id);
    return;
  }
  // An answer: the comment prompt after the score (when one is set), else the thanks.
  const scored = data.csat?.score !== null && data.csat?.comment === null;
  if (scored && setting.comment_prompt) {
    await openCommentWindow(tx, event.accountId, data.id, new Date(s.now().getTime() + COMMENT_WINDOW_MS));
    await sendInboxReply(
      s,
      tx,
      to,
      { type: 'text', text: setting.comment_prompt },
      `csat:${event.id}`,
      sent,
      data.id,
    );
  } else if (setting.thanks) {
    await sendInboxReply(
      s,
      tx,
      to,
      { type: 'text', text: setting.thanks },
      `csat:${event.id}`,
      sent,
      data.id,
    );
  }
}
