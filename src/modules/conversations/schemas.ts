// How conversations look on the wire, and the bodies and queries of their routes.
import { Type } from 'typebox';
import { PageQuery } from '../../kernel/http/pagination.ts';
import { NullableTimestamp, nullable, Timestamp } from '../../kernel/http/schemas.ts';
import {
  chatSendFields,
  MessageSchema,
  scheduleFields,
  templateSendFields,
  toMessage,
} from '../messages/index.ts';
import { SERVICE_WINDOW_MS } from '../pricing/index.ts';
import { MAX_LABELS, MAX_MENTIONS, MAX_NOTE_LENGTH, MAX_SNOOZE_DAYS } from './limits.ts';
import type { ConversationView } from './repo.ts';

const StatusSchema = Type.Enum(['open', 'closed'], { description: '`open` or `closed`.' });

export const ConversationSchema = Type.Object(
  {
    id: Type.String({ examples: ['cnv_01jv4e2k7qf3x8m2n5p6r9s0tb'] }),
    contactId: Type.String(),
    phone: Type.Union([Type.String(), Type.Null()], {
      description:
        "The contact's number when the conversation opened; null for a customer who did not share it (known by WhatsApp user id: see the contact).",
    }),
    status: StatusSchema,
    assigneeId: nullable(Type.String({ description: 'The team member it is assigned to.' })),
    teamId: nullable(
      Type.String({
        description: 'The team it belongs to (`tem_…`); with no assignee, it waits in the team’s queue.',
      }),
    ),
    serviceWindowExpiresAt: {
      ...NullableTimestamp,
      description:
        "24 hours after the contact's last message (in any conversation): until then free-form messages may be sent; null if the contact never wrote.",
    },
    serviceWindowOpen: Type.Boolean({ description: 'Whether the customer service window is open now.' }),
    lastInboundAt: {
      ...NullableTimestamp,
      description: "The customer's last message in this conversation.",
    },
    lastMessageAt: { ...Timestamp, description: 'The last message in either direction: the list’s order.' },
    lastMessage: nullable(MessageSchema),
    unreadCount: Type.Integer({
      minimum: 0,
      description: "The customer's messages since the business last wrote in this conversation.",
    }),
    labels: Type.Array(Type.String(), {
      maxItems: MAX_LABELS,
      description:
        "The conversation's labels (lower-cased, in the order added): what the matter is (refund, vip), not the contact's tags.",
    }),
    snoozedUntil: {
      ...NullableTimestamp,
      description:
        'Hidden from the open list until then, or until the customer writes, whichever comes first; null when not snoozed.',
    },
    openedAt: Timestamp,
    closedAt: NullableTimestamp,
    closedBy: nullable(
      Type.String({
        description: 'The console member who closed it (null: an API key, a rule, the contact deleted).',
      }),
    ),
    csat: nullable(
      Type.Object(
        {
          score: nullable(
            Type.Integer({ minimum: 1, maximum: 5, description: '1–5 (the faces are 1, 3 and 5).' }),
          ),
          comment: nullable(
            Type.String({ description: 'What the customer wrote after the score, if asked.' }),
          ),
          agentId: nullable(
            Type.String({ description: 'The member the answer is about: who closed it, else its assignee.' }),
          ),
          sentAt: Timestamp,
          answeredAt: NullableTimestamp,
        },
        {
          description:
            'The satisfaction survey of its last close (GET|PUT /account/csat); null: none was sent.',
        },
      ),
    ),
    sla: nullable(
      Type.Object(
        {
          policyId: nullable(
            Type.String({ description: 'The SLA policy that applies (`sla_…`); null: none any more.' }),
          ),
          startedAt: {
            ...Timestamp,
            description: 'The clock’s start: when it opened, or was last reopened.',
          },
          firstResponseDueAt: {
            ...NullableTimestamp,
            description:
              'When the business’s first reply is due (null: no such target, or never in business hours).',
          },
          firstResponseAt: {
            ...NullableTimestamp,
            description:
              'The business’s first reply since the clock started (not the away message, greeting or survey).',
          },
          firstResponseBreachedAt: {
            ...NullableTimestamp,
            description: 'When the first response target was found missed (`conversation.sla_breached`).',
          },
          resolutionDueAt: { ...NullableTimestamp, description: 'When it must be closed by.' },
          resolutionBreachedAt: {
            ...NullableTimestamp,
            description: 'When the resolution target was found missed.',
          },
          nextDueAt: {
            ...NullableTimestamp,
            description:
              'The soonest due time still to judge (the inbox’s `order=sla_due`); null: none left.',
          },
        },
        { description: 'Its SLA (POST /sla-policies); null: no policy applies and none was missed.' },
      ),
    ),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'Conversation' },
);

export const ConversationIdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });

export const ConversationListQuery = Type.Object(
  {
    ...PageQuery,
    status: Type.Optional(StatusSchema),
    assigneeId: Type.Optional(Type.String({ maxLength: 100, description: 'Assigned to this member.' })),
    unassigned: Type.Optional(
      Type.Boolean({ description: '`true`: only conversations assigned to nobody.' }),
    ),
    teamId: Type.Optional(
      Type.String({ maxLength: 100, description: 'Of this team (with `unassigned=true`: its queue).' }),
    ),
    contactId: Type.Optional(Type.String({ maxLength: 100 })),
    label: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, description: 'Only conversations with this label.' }),
    ),
    snoozed: Type.Optional(
      Type.Boolean({
        description:
          '`true`: only snoozed conversations; `false`: only those not snoozed. Left out, `status=open` leaves snoozed ones out (the inbox); without `status`, both.',
      }),
    ),
    order: Type.Optional(
      Type.Enum(['activity', 'sla_due'], {
        description:
          '`activity` (the default): the last message first; `sla_due`: the soonest SLA due time first (`sla.nextDueAt`), those with none after them; needs `status=open`.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const ConversationMessagesQuery = Type.Object({ ...PageQuery }, { additionalProperties: false });

export const AssignBody = Type.Object(
  {
    assigneeId: Type.Optional(
      Type.Union([Type.String({ minLength: 1, maxLength: 100 }), Type.Null()], {
        description: 'A team member of the account (`usr_…`), or null to unassign.',
      }),
    ),
    teamId: Type.Optional(
      Type.Union([Type.String({ minLength: 1, maxLength: 100 }), Type.Null()], {
        description:
          'A team of the account (`tem_…`), or null for none. Without `assigneeId`, the team’s assignment picks a member (or queues it).',
      }),
    ),
  },
  {
    additionalProperties: false,
    description: 'At least one of `assigneeId` and `teamId`.',
  },
);

/** POST /conversations/{id}/messages: what POST /messages takes, without `to` (the contact's). */
export const ReplyBody = Type.Object(
  { ...chatSendFields, ...templateSendFields, ...scheduleFields },
  {
    additionalProperties: false,
    description:
      'The body of POST /messages without `to`: a template (`templateName`, `templateLanguage`, `parameters` as a list or, for a NAMED template, by name, `buttonPayloads`), or `type` text, media, interactive, location, contacts or reaction inside the customer service window; `context` quotes an earlier message.',
  },
);

export function toConversation(row: ConversationView, now: Date) {
  const windowEnds = row.contact_last_inbound_at
    ? new Date(row.contact_last_inbound_at.getTime() + SERVICE_WINDOW_MS)
    : null;
  return {
    id: row.id,
    contactId: row.contact_id,
    phone: row.phone,
    status: row.status,
    assigneeId: row.assignee_id,
    teamId: row.team_id,
    serviceWindowExpiresAt: windowEnds?.toISOString() ?? null,
    serviceWindowOpen: windowEnds !== null && now < windowEnds,
    lastInboundAt: row.last_inbound_at?.toISOString() ?? null,
    lastMessageAt: row.last_message_at.toISOString(),
    lastMessage: row.last_message ? toMessage(row.last_message) : null,
    unreadCount: row.unread_count,
    labels: row.labels,
    snoozedUntil: row.snoozed_until?.toISOString() ?? null,
    openedAt: row.opened_at.toISOString(),
    closedAt: row.closed_at?.toISOString() ?? null,
    closedBy: row.closed_by,
    csat: row.csat_close_at
      ? {
          score: row.csat_score,
          comment: row.csat_comment,
          agentId: row.csat_agent_id,
          sentAt: row.csat_close_at.toISOString(),
          answeredAt: row.csat_answered_at?.toISOString() ?? null,
        }
      : null,
    sla: slaOf(row),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

const iso = (at: Date | null) => at?.toISOString() ?? null;

function slaOf(row: ConversationView) {
  if (
    !row.sla_started_at ||
    (!row.sla_policy_id && !row.sla_first_response_breached_at && !row.sla_resolution_breached_at)
  )
    return null;
  return {
    policyId: row.sla_policy_id,
    startedAt: row.sla_started_at.toISOString(),
    firstResponseDueAt: iso(row.sla_first_response_due_at),
    firstResponseAt: iso(row.first_response_at),
    firstResponseBreachedAt: iso(row.sla_first_response_breached_at),
    resolutionDueAt: iso(row.sla_resolution_due_at),
    resolutionBreachedAt: iso(row.sla_resolution_breached_at),
    nextDueAt: iso(row.sla_next_due_at),
  };
}

export const NoteSchema = Type.Object(
  {
    id: Type.String({ examples: ['nte_01jv4e2k7qf3x8m2n5p6r9s0tb'] }),
    conversationId: Type.String(),
    authorId: nullable(
      Type.String({
        description:
          'The team member who wrote it: a console session’s own, or the one an API key named; null when none was named (or the member was removed).',
      }),
    ),
    text: Type.String(),
    mentions: Type.Array(Type.String(), { description: 'The team members it mentions.' }),
    createdAt: Timestamp,
  },
  { title: 'Note' },
);

export const CreateNoteBody = Type.Object(
  {
    text: Type.String({
      minLength: 1,
      maxLength: MAX_NOTE_LENGTH,
      description: 'Never sent to the customer.',
    }),
    mentions: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
        maxItems: MAX_MENTIONS,
        description: 'Team members of the account (`usr_…`) to tell: one `conversation.mentioned` each.',
      }),
    ),
    authorId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        description:
          'With an API key, the team member writing it (left out: nobody). A console session writes as its own member.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const LabelsBody = Type.Object(
  {
    labels: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
      minItems: 1,
      maxItems: MAX_LABELS,
      description:
        'Labels to add (lower-cased; 1–50 letters, digits, spaces or - _ : ., starting with a letter or digit). Those it has are ignored.',
    }),
  },
  { additionalProperties: false },
);

export const ConversationLabelParams = Type.Object({
  id: Type.String({ maxLength: 100 }),
  label: Type.String({ maxLength: 100 }),
});

export const SnoozeBody = Type.Object(
  {
    until: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: `When it comes back to the open list (in the future, at most ${MAX_SNOOZE_DAYS} days ahead), unless the customer writes first; null wakes it now.`,
    }),
  },
  { additionalProperties: false },
);
