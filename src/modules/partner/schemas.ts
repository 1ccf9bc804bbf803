// Request bodies and queries of the partner endpoints.
import { Type } from 'typebox';
import { AccountStatusSchema, AddonsSchema, PlanCodeSchema } from '../accounts/index.ts';

const accountName = Type.String({
  minLength: 1,
  maxLength: 200,
  description: 'Display name of the client account.',
});
const externalRef = Type.String({
  minLength: 1,
  maxLength: 200,
  description: 'Your own reference for the client; unique among your accounts.',
});

export const ProvisionBody = Type.Object(
  {
    accountName,
    countryCode: Type.String({ pattern: '^[A-Za-z]{2}$', description: 'ISO 3166-1 alpha-2, e.g. "US".' }),
    planCode: PlanCodeSchema,
    externalRef: Type.Optional(externalRef),
    addons: Type.Optional(AddonsSchema),
  },
  { additionalProperties: false },
);

export const UpdateAccountBody = Type.Object(
  {
    accountName: Type.Optional(accountName),
    planCode: Type.Optional(PlanCodeSchema),
    addons: Type.Optional(AddonsSchema),
    externalRef: Type.Optional(Type.Union([externalRef, Type.Null()])),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const AccountIdParams = Type.Object({ accountId: Type.String({ maxLength: 64 }) });
export const KeyIdParams = Type.Object({ keyId: Type.String({ maxLength: 64 }) });
export const AccountKeyParams = Type.Object({
  accountId: Type.String({ maxLength: 64 }),
  keyId: Type.String({ maxLength: 64 }),
});

export const AccountListQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
    status: Type.Optional(AccountStatusSchema),
    externalRef: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);

export const BootstrapResult = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    scope: Type.String(),
    apiKey: Type.String({ description: 'The first partner key. Shown this once: store it now.' }),
    createdAt: Type.String({ format: 'date-time' }),
    expiresAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    partnerId: Type.String(),
  },
  { title: 'BootstrapResult' },
);
