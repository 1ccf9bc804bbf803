// API keys on the wire. The full key text (`apiKey`) appears only in the answer that creates it.
import { Type } from 'typebox';
import { NullableTimestamp, Timestamp } from '../../kernel/http/schemas.ts';
import type { KeyRow } from './service.ts';

const KeyScopeSchema = Type.String({ enum: ['live', 'sandbox', 'partner'] });

export const ApiKeyInfo = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    scope: KeyScopeSchema,
    lastFour: Type.String({ description: 'The last four characters of the key, to recognise it.' }),
    createdAt: Timestamp,
    expiresAt: NullableTimestamp,
    lastUsedAt: Type.Union([Timestamp, Type.Null()], { description: 'Updated at most once a minute.' }),
    revokedAt: NullableTimestamp,
  },
  { title: 'ApiKey' },
);

export const CreatedApiKey = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    scope: KeyScopeSchema,
    apiKey: Type.String({ description: 'The key itself. Shown this once: store it now.' }),
    createdAt: Timestamp,
    expiresAt: NullableTimestamp,
  },
  { title: 'CreatedApiKey' },
);

const keyName = Type.String({ minLength: 1, maxLength: 100, description: 'What the key is for.' });
const expiresAt = Type.Optional(
  Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'When the key stops working.',
  }),
);

export const CreateAccountKeyBody = Type.Object(
  {
    name: keyName,
    scope: Type.Optional(
      Type.Union([Type.Literal('live'), Type.Literal('sandbox')], {
        default: 'live',
        description: 'live: real sends and charges; sandbox: simulated, never charged.',
      }),
    ),
    expiresAt,
  },
  { additionalProperties: false },
);

export const CreatePartnerKeyBody = Type.Object(
  { name: keyName, scope: Type.Optional(Type.Literal('partner')), expiresAt },
  { additionalProperties: false },
);

export function toKeyInfo(row: KeyRow) {
  return {
    id: row.id,
    name: row.name,
    scope: row.scope,
    lastFour: row.last_four,
    createdAt: row.created_at.toISOString(),
    expiresAt: row.expires_at?.toISOString() ?? null,
    lastUsedAt: row.last_used_at?.toISOString() ?? null,
    revokedAt: row.revoked_at?.toISOString() ?? null,
  };
}

export function toCreatedKey(row: KeyRow, apiKey: string) {
  return {
    id: row.id,
    name: row.name,
    scope: row.scope,
    apiKey,
    createdAt: row.created_at.toISOString(),
    expiresAt: row.expires_at?.toISOString() ?? null,
  };
}
