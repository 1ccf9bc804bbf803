import { Type } from 'typebox';
import { PageQuery } from '../../kernel/http/pagination.ts';
import { NullableTimestamp, Timestamp } from '../../kernel/http/schemas.ts';
import type { MemberRow } from './repo.ts';

const RoleSchema = Type.Enum(['admin', 'agent'], { description: 'The member’s role: `admin` or `agent`.' });

const AvailabilitySchema = Type.Enum(['online', 'away', 'offline'], {
  description:
    '`online` takes new conversations (auto-assignment gives them some), `away` keeps those it has and takes none, `offline` takes none. A new member is `online`.',
});

export const CreateMemberBody = Type.Object(
  {
    name: Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'Display name; surrounding spaces are dropped.',
      examples: ['Ann Lee'],
    }),
    email: Type.String({
      format: 'email',
      maxLength: 254,
      description: 'Unique within the account, compared and stored lower-cased.',
      examples: ['ann@example.com'],
    }),
    role: RoleSchema,
  },
  { additionalProperties: false },
);

export const MemberSchema = Type.Object(
  {
    id: Type.String({ examples: ['usr_01jv0000000000000000000000'] }),
    name: Type.String(),
    email: Type.String(),
    role: RoleSchema,
    availability: AvailabilitySchema,
    availabilityChangedAt: {
      ...NullableTimestamp,
      description: 'When the availability last changed; null: never.',
    },
    createdAt: Timestamp,
  },
  { title: 'TeamMember' },
);

export const UpdateMemberBody = Type.Object(
  { availability: AvailabilitySchema },
  { additionalProperties: false },
);

export const MemberIdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });

export const MemberListQuery = Type.Object(
  { ...PageQuery, role: Type.Optional(RoleSchema) },
  { additionalProperties: false },
);

export function toMember(row: MemberRow) {
  return {
    id: row.id,
    name: row.name,
    email: row.email,
    role: row.role,
    availability: row.availability,
    availabilityChangedAt: row.availability_changed_at?.toISOString() ?? null,
    createdAt: row.created_at.toISOString(),
  };
}
