// How teams look on the wire, and the bodies of their routes.
import { Type } from 'typebox';
import { PageQuery } from '../../kernel/http/pagination.ts';
import { nullable, Timestamp } from '../../kernel/http/schemas.ts';
import type { TeamRow } from './repo.ts';

export const MAX_TEAM_MEMBERS = 200;

const Mode = Type.Enum(['manual', 'round_robin', 'least_busy'], {
  description:
    '`round_robin`: the next available member in the team’s order; `least_busy`: the available member with the fewest of the team’s open conversations; `manual`: nobody (they wait in the team’s queue).',
});

const Assignment = Type.Object(
  {
    mode: Mode,
    capacity: nullable(
      Type.Integer({
        minimum: 1,
        maximum: 10_000,
        description: 'The most open conversations of the team one member is given; null: no limit.',
      }),
    ),
  },
  { additionalProperties: false },
);

const fields = {
  name: Type.String({ minLength: 1, maxLength: 100, description: 'One per account.', examples: ['Support'] }),
  members: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
    maxItems: MAX_TEAM_MEMBERS,
    uniqueItems: true,
    description: 'Team members of the account (`usr_…`), in the order round robin takes them.',
  }),
  assignment: Assignment,
  default: Type.Boolean({
    description:
      'The team that receives every new conversation no rule routes elsewhere (one per account: setting it takes it from the other).',
  }),
  onOffline: Type.Enum(['requeue', 'keep'], {
    description:
      'What a member going offline does to their open conversations of the team: `requeue` gives them back to the queue (the rest of the team takes them), `keep` leaves them.',
  }),
};

export const TeamSchema = Type.Object(
  {
    id: Type.String({ examples: ['tem_01jv4e2k7qf3x8m2n5p6r9s0tb'] }),
    ...fields,
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'Team' },
);

export const CreateTeamBody = Type.Object(
  {
    name: fields.name,
    members: Type.Optional(fields.members),
    assignment: Type.Optional(
      Type.Partial(Assignment, {
        additionalProperties: false,
        description: 'Left out: round robin, no capacity limit.',
      }),
    ),
    default: Type.Optional(fields.default),
    onOffline: Type.Optional(fields.onOffline),
  },
  { additionalProperties: false },
);

export const UpdateTeamBody = Type.Partial(CreateTeamBody, {
  additionalProperties: false,
  description: 'The fields to change (`members` replaced whole).',
});

export const TeamIdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });
export const TeamListQuery = Type.Object({ ...PageQuery }, { additionalProperties: false });

export function toTeam(row: TeamRow) {
  return {
    id: row.id,
    name: row.name,
    members: row.members,
    assignment: { mode: row.mode, capacity: row.capacity },
    default: row.is_default,
    onOffline: row.on_offline,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
