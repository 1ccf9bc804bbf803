// Console logins: first-run bootstrap, sign-in, invitations and their acceptance. Each way in ends
// with a session (sessions.ts) whose cookie the route sets.
import type { FastifyRequest } from 'fastify';
import { generateToken, hashSecret } from '../../kernel/access/key-text.ts';
import type { KernelContext } from '../../kernel/context.ts';
import { sqlState, UNIQUE_VIOLATION } from '../../kernel/database/db.ts';
import { ApiError, conflict, notFound } from '../../kernel/http/errors.ts';
import { newId } from '../../kernel/values/ids.ts';
import { bootstrapWith, precheckBootstrap } from '../partner/index.ts';
import { findMember } from '../team/index.ts';
import { noteLoginSuccess, takeLoginAttempt } from './login-limits.ts';
import { checkPassword, hashPassword, passwordMatches } from './passwords.ts';
import {
  findInvitation,
  findUserByEmail,
  type InvitationRow,
  insertInvitation,
  insertUser,
  lockInvitation,
  markAccepted,
} from './repo.ts';
import { openSession } from './sessions.ts';

/** How long an invitation link works. */
export const INVITATION_DAYS = 7;

type Ctx = Pick<KernelContext, 'db' | 'config' | 'sessions' | 'rateLimits' | 'now'>;

export function normalEmail(email: string): string {
  return email.trim().toLowerCase();
}

function emailTaken(): ApiError {
  return conflict('This email already has a console login.', [
    { field: 'email', issue: 'already has a login' },
  ]);
}

/** The first run in the console: the partner and its first admin, signed in. Answers the token. */
export async function bootstrapConsole(
  ctx: Ctx,
  input: { token: string; email: string; password: string; name: string },
  request: FastifyRequest,
): Promise<string> {
  // The token first: the hash is slow, and the bootstrap has no attempt limit to pay for it.
  checkPassword(input.password);
  await precheckBootstrap(ctx.db, ctx.config, input.token);
  const passwordHash = await hashPassword(input.password);
  return bootstrapWith(ctx.db, ctx.config, input.token, ctx.now(), async (tx, partnerId) => {
    const user = await insertUser(
      tx,
      {
        id: newId('consoleUser'),
        email: normalEmail(input.email),
        name: input.name.trim() || input.email,
        password_hash: passwordHash,
        kind: 'partner_admin',
        partner_id: partnerId,
        account_id: null,
        member_id: null,
      },
      ctx.now(),
    );
    return openSession(ctx, tx, user, request);
  });
}

const WRONG = 'The email or password is wrong.';

/** Signs in; answers the new session's token. One refusal for an unknown email and a wrong password. */
export async function signIn(
  ctx: Ctx,
  input: { email: string; password: string },
  request: FastifyRequest,
): Promise<string> {
  const email = normalEmail(input.email);
  const address = request.ip || 'unknown';
  // Counted before the hash, so attempts sent at once each find the others counted (login-limits.ts).
  await takeLoginAttempt(ctx.rateLimits, address, email);
  const user = await findUserByEmail(ctx.db, email);
  if (!(await passwordMatches(user?.password_hash ?? null, input.password)) || !user) {
    throw new ApiError('INVALID_CREDENTIALS', WRONG);
  }
  await noteLoginSuccess(ctx.rateLimits, address, email);
  return openSession(ctx, ctx.db, user, request);
}

export interface MadeInvitation {
  row: InvitationRow;
  token: string;
}

async function invite(
  ctx: Ctx,
  row: Omit<InvitationRow, 'id' | 'token_hash' | 'created_at' | 'accepted_at' | 'expires_at'>,
): Promise<MadeInvitation> {
  if (await findUserByEmail(ctx.db, row.email)) throw emailTaken();
  const token = generateToken();
  const now = ctx.now();
  const inserted = await insertInvitation(
    ctx.db,
    {
      ...row,
      id: newId('consoleInvitation'),
      token_hash: hashSecret(token),
      expires_at: new Date(now.getTime() + INVITATION_DAYS * 86_400_000),
    },
    now,
  );
  return { row: inserted, token };
}

/** An invitation to become a partner admin of `partnerId`. */
export function invitePartnerAdmin(
  ctx: Ctx,
  partnerId: string,
  input: { email: string; name: string },
  createdBy: string,
): Promise<MadeInvitation> {
  return invite(ctx, {
    kind: 'partner_admin',
    email: normalEmail(input.email),
    name: input.name.trim() || input.email,
    partner_id: partnerId,
    account_id: null,
    member_id: null,
    created_by: createdBy,
  });
}

/** An invitation that gives team member `memberId` of `accountId` a login (with the member's email). */
export async function inviteMember(
  ctx: Ctx,
  accountId: string,
  memberId: string,
  createdBy: string,
): Promise<MadeInvitation> {
  const member = await findMember(ctx.db, accountId, memberId);
  if (!member) throw notFound('team member');
  return invite(ctx, {
    kind: 'member',
    email: member.email,
    name: member.name,
    partner_id: null,
    account_id: accountId,
    member_id: member.id,
    created_by: createdBy,
  });
}

function usableOr404(invitation: InvitationRow | null, now: Date): InvitationRow {
  if (!invitation || invitation.accepted_at || invitation.expires_at <= now) {
    throw new ApiError(
      'RESOURCE_NOT_FOUND',
      'This invitation link is unknown, already used or expired: ask for a new one.',
    );
  }
  return invitation;
}

/** Accepts an invitation once: the login is made with this password and signed in. */
export async function acceptInvitation(
  ctx: Ctx,
  input: { token: string; password: string },
  request: FastifyRequest,
): Promise<string> {
  const now = ctx.now();
  const tokenHash = hashSecret(input.token);
  // The link first, unlocked: a wrong one must cost no password hash (nothing limits attempts).
  checkPassword(input.password);
  usableOr404(await findInvitation(ctx.db, tokenHash), now);
  const passwordHash = await hashPassword(input.password);
  try {
    return await ctx.db.transaction(async (tx) => {
      const invitation = usableOr404(await lockInvitation(tx, tokenHash), now);
      if (await findUserByEmail(tx, invitation.email)) throw emailTaken();
      const user = await insertUser(
        tx,
        {
          id: newId('consoleUser'),
          email: invitation.email,
          name: invitation.name,
          password_hash: passwordHash,
          kind: invitation.kind,
          partner_id: invitation.partner_id,
          account_id: invitation.account_id,
          member_id: invitation.member_id,
        },
        now,
      );
      await markAccepted(tx, invitation.id, now);
      return openSession(ctx, tx, user, request);
    });
  } catch (err) {
    // Two acceptances at once for one email (two invitations): the second finds the login made.
    if (sqlState(err) === UNIQUE_VIOLATION) throw emailTaken();
    throw err;
  }
}
