// Opening and ending console sessions, and their cookie. The cookie holds a 32-byte random token;
// the database keeps its SHA-256 only, with the CSRF token the session's changes must carry.
import { randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type ConsoleSession, SESSION_COOKIE } from '../../kernel/access/console-principal.ts';
import { hashSecret } from '../../kernel/access/key-text.ts';
import type { KernelContext } from '../../kernel/context.ts';
import type { Sql } from '../../kernel/database/db.ts';
import { newId } from '../../kernel/values/ids.ts';
import { insertSession, revokeSession, revokeUserSessions } from './repo.ts';

type Ctx = Pick<KernelContext, 'config' | 'sessions' | 'now'>;

/** Opens a session for a login (inside the caller's transaction when given one). */
export async function openSession(
  ctx: Ctx,
  sql: Sql,
  user: { id: string },
  request: FastifyRequest,
): Promise<string> {
  const now = ctx.now();
  const token = randomBytes(32).toString('base64url');
  await insertSession(
    sql,
    {
      id: newId('consoleSession'),
      userId: user.id,
      tokenHash: hashSecret(token),
      csrfToken: randomBytes(32).toString('base64url'),
      expiresAt: new Date(now.getTime() + ctx.config.consoleSessionHours * 3_600_000),
      address: request.ip ?? null,
      userAgent: (request.headers['user-agent'] ?? '').slice(0, 500) || null,
    },
    now,
  );
  return token;
}

/** The session a token just opened, read back as the access policy sees it. */
export async function sessionOf(ctx: Ctx, token: string): Promise<ConsoleSession> {
  const session = await ctx.sessions.resolve(token, ctx.now());
  if (!session) throw new Error('a session just opened could not be read');
  return session;
}

export function setSessionCookie(ctx: Ctx, reply: FastifyReply, token: string): void {
  reply.setCookie(SESSION_COOKIE, token, {
    httpOnly: true,
    sameSite: 'lax',
    path: '/',
    secure: ctx.config.publicBaseUrl.startsWith('https:'),
    maxAge: ctx.config.consoleSessionHours * 3600,
  });
}

export function clearSessionCookie(ctx: Ctx, reply: FastifyReply): void {
  reply.clearCookie(SESSION_COOKIE, {
    httpOnly: true,
    sameSite: 'lax',
    path: '/',
    secure: ctx.config.publicBaseUrl.startsWith('https:'),
  });
}

/** Signs out: ends the session, in this process at once, elsewhere within a second. */
export async function endSession(ctx: Ctx, sql: Sql, sessionId: string, token: string): Promise<void> {
  await revokeSession(sql, sessionId, ctx.now());
  ctx.sessions.forget(token);
}

/** Ends every session of the login, this one included; answers how many ended. */
export async function endAllSessions(ctx: Ctx, sql: Sql, userId: string): Promise<number> {
  const ended = await revokeUserSessions(sql, userId, ctx.now());
  ctx.sessions.forgetAll();
  return ended;
}
