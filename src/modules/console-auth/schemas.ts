// The console's sign-in on the wire.
import { Type } from 'typebox';
import type { ConsoleSession } from '../../kernel/access/console-principal.ts';
import { Timestamp } from '../../kernel/http/schemas.ts';
import { PASSWORD_MAX, PASSWORD_MIN } from './passwords.ts';
import type { InvitationRow } from './repo.ts';

const Email = Type.String({
  format: 'email',
  maxLength: 254,
  description: 'Compared and stored lower-cased; one login per email in the installation.',
  examples: ['ann@example.com'],
});
const Password = Type.String({
  minLength: PASSWORD_MIN,
  maxLength: PASSWORD_MAX,
  description: `${PASSWORD_MIN} to ${PASSWORD_MAX} characters; stored as an argon2id hash.`,
});
const Name = Type.String({
  minLength: 1,
  maxLength: 200,
  description: 'Display name.',
  examples: ['Ann Lee'],
});
const Token = Type.String({ minLength: 1, maxLength: 200 });

const Role = Type.String({
  enum: ['partner_admin', 'account_admin', 'agent'],
  description:
    'partner_admin: every account of the partner; account_admin: one account; agent: the inbox of one account. A member’s login has the member’s role, read at each request.',
});

export const ConsoleSetup = Type.Object(
  { bootstrapped: Type.Boolean({ description: 'Whether the first partner exists (first run done).' }) },
  { title: 'ConsoleSetup' },
);

export const ConsoleSessionSchema = Type.Object(
  {
    id: Type.String({ examples: ['ses_01jv0000000000000000000000'] }),
    user: Type.Object(
      {
        id: Type.String({ examples: ['lgn_01jv0000000000000000000000'] }),
        email: Type.String(),
        name: Type.String(),
        role: Role,
        partnerId: Type.Union([Type.String(), Type.Null()], { description: 'A partner admin’s partner.' }),
        accountId: Type.Union([Type.String(), Type.Null()], {
          description: 'The account of an account admin or agent.',
        }),
        memberId: Type.Union([Type.String(), Type.Null()], {
          description:
            'The team member (`usr_…`) an account admin or agent is (to filter conversations assigned to them); null for a partner admin.',
        }),
      },
      { title: 'ConsoleUser' },
    ),
    csrfToken: Type.String({
      description: 'Send it as X-CSRF-Token with every POST, PUT, PATCH and DELETE made with this session.',
    }),
    createdAt: Timestamp,
    expiresAt: Type.String({
      format: 'date-time',
      description:
        'When the session ends if not used before then (the idle expiry, or the absolute one if sooner).',
    }),
  },
  { title: 'ConsoleSession' },
);

export const BootstrapConsoleBody = Type.Object(
  {
    token: Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'The bootstrap token `npm start` printed.',
    }),
    email: Email,
    password: Password,
    name: Name,
  },
  { additionalProperties: false },
);

export const SignInBody = Type.Object(
  { email: Email, password: Type.String({ minLength: 1, maxLength: PASSWORD_MAX }) },
  { additionalProperties: false },
);

export const SignedOutEverywhere = Type.Object(
  { ended: Type.Integer({ description: 'Sessions ended, this one included.' }) },
  { title: 'SignedOutEverywhere' },
);

export const PartnerInvitationBody = Type.Object(
  { email: Email, name: Name },
  { additionalProperties: false },
);

export const AcceptInvitationBody = Type.Object(
  { token: Token, password: Password },
  { additionalProperties: false },
);

export const ConsoleInvitation = Type.Object(
  {
    id: Type.String({ examples: ['inv_01jv0000000000000000000000'] }),
    email: Type.String(),
    name: Type.String(),
    kind: Type.String({ enum: ['partner_admin', 'member'], description: 'What accepting it makes.' }),
    memberId: Type.Union([Type.String(), Type.Null()]),
    expiresAt: Timestamp,
    token: Type.String({ description: 'The one-time token. Shown this once.' }),
    url: Type.String({
      description: 'The link to give the person: /console/invite#<token>. Shown this once.',
    }),
  },
  { title: 'ConsoleInvitation' },
);

export const MemberIdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });

export function toSession(session: ConsoleSession) {
  return {
    id: session.id,
    user: {
      id: session.userId,
      email: session.email,
      name: session.name,
      role: session.role,
      partnerId: session.partnerId,
      accountId: session.accountId,
      memberId: session.memberId,
    },
    csrfToken: session.csrfToken,
    createdAt: session.createdAt.toISOString(),
    expiresAt: session.expiresAt.toISOString(),
  };
}

export function toInvitation(row: InvitationRow, token: string, baseUrl: string) {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    kind: row.kind,
    memberId: row.member_id,
    expiresAt: row.expires_at.toISOString(),
    token,
    url: `${baseUrl}/console/invite#${token}`,
  };
}
