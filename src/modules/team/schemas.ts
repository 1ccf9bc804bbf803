import { Type } from 'typebox';
import { PageQuery } from '../../kernel/http/pagination.ts';
import { Timestamp } from '../../kernel/http/schemas.ts';
import type { MemberRow } from './repo.ts';

const RoleSchema = Type.Enum(['admin', 'agent'], { description: 'The member’s role: `admin` or `agent`.' });

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
    createdAt: Timestamp,
  },
  { title: 'TeamMember' },
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
    createdAt: row.created_at.toISOString(),
  };
}
