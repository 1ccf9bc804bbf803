// How SLA policies look on the wire, and the bodies of their routes.
import { Type } from 'typebox';
import { Timestamp } from '../../kernel/http/schemas.ts';
import type { SlaPolicyRow } from './repo.ts';

/** 30 days: a target further off is not a service level. */
export const MAX_TARGET_MINUTES = 43_200;
export const MAX_POLICY_LABELS = 20;
export const MAX_POLICY_TEAMS = 20;

const Minutes = (what: string) =>
  Type.Union([Type.Integer({ minimum: 1, maximum: MAX_TARGET_MINUTES }), Type.Null()], {
    description: `Minutes from the conversation's opening (or reopening) to ${what} (1 to 43,200: 30 days); null: no such target.`,
  });

const fields = {
  name: Type.String({ minLength: 1, maxLength: 100, description: 'One per account.', examples: ['VIP'] }),
  firstResponseMinutes: Minutes('the business’s first reply'),
  resolutionMinutes: Minutes('its close'),
  businessHours: Type.Boolean({
    description:
      'Count only the account’s open hours (GET /account/business-hours; none set: around the clock).',
  }),
  labels: Type.Array(Type.String({ minLength: 1, maxLength: 50 }), {
    maxItems: MAX_POLICY_LABELS,
    description: 'It applies to conversations with any of these labels; empty: whatever their labels.',
  }),
  teamIds: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
    maxItems: MAX_POLICY_TEAMS,
    uniqueItems: true,
    description: 'It applies to conversations of any of these teams (`tem_…`); empty: whatever their team.',
  }),
  position: Type.Integer({
    minimum: 0,
    maximum: 1_000_000,
    description: 'Policies are tried lowest position first (then oldest); the first that applies counts.',
  }),
};

export const SlaPolicySchema = Type.Object(
  {
    id: Type.String({ examples: ['sla_01jv4e2k7qf3x8m2n5p6r9s0tb'] }),
    ...fields,
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'SlaPolicy' },
);

export const CreateSlaPolicyBody = Type.Object(
  {
    name: fields.name,
    firstResponseMinutes: Type.Optional(fields.firstResponseMinutes),
    resolutionMinutes: Type.Optional(fields.resolutionMinutes),
    businessHours: Type.Optional(fields.businessHours),
    labels: Type.Optional(fields.labels),
    teamIds: Type.Optional(fields.teamIds),
    position: Type.Optional(fields.position),
  },
  {
    additionalProperties: false,
    description:
      'At least one target. Left out: no labels and no teams (every conversation), around the clock, position 0.',
  },
);

export const UpdateSlaPolicyBody = Type.Partial(CreateSlaPolicyBody, {
  additionalProperties: false,
  description: 'The fields to change (`labels` and `teamIds` replaced whole).',
});

export const SlaPolicyIdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });

export function toSlaPolicy(row: SlaPolicyRow) {
  return {
    id: row.id,
    name: row.name,
    firstResponseMinutes: row.first_response_minutes,
    resolutionMinutes: row.resolution_minutes,
    businessHours: row.business_hours,
    labels: row.labels,
    teamIds: row.team_ids,
    position: row.position,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
