// /console/*: the console's first run, sign-in, session and invitations (docs/console.md), and the
// invitation routes on partners and team members. Sign-in answers set the `tidings_session` cookie.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { accountOf, partnerOf } from '../../kernel/access/access.ts';
import { checkOrigin, sessionToken } from '../../kernel/access/console-principal.ts';
import type { KernelContext } from '../../kernel/context.ts';
import { ApiError } from '../../kernel/http/errors.ts';
import { isBootstrapped } from '../partner/index.ts';
import {
  AcceptInvitationBody,
  BootstrapConsoleBody,
  ConsoleInvitation,
  ConsoleSessionSchema,
  ConsoleSetup,
  MemberIdParams,
  PartnerInvitationBody,
  SignedOutEverywhere,
  SignInBody,
  toInvitation,
  toSession,
} from './schemas.ts';
import { acceptInvitation, bootstrapConsole, inviteMember, invitePartnerAdmin, signIn } from './service.ts';
import { clearSessionCookie, endAllSessions, endSession, sessionOf, setSessionCookie } from './sessions.ts';

const tags = ['console'];
const session = { access: 'session' } as const;

export function consoleAuthRoutes(ctx: KernelContext): FastifyPluginAsyncTypebox {
  /** Answers a just-opened session: 201, its cookie set, the user and CSRF token in the body. */
  async function signedIn(reply: FastifyReply, token: string) {
    setSessionCookie(ctx, reply, token);
    reply.status(201);
    return toSession(await sessionOf(ctx, token));
  }

  function currentSession(request: FastifyRequest) {
    const c = request.principal?.console;
    const token = sessionToken(request);
    if (!c || !token) throw new Error('session route without a session');
    return { ...c, token };
  }

  // Where the invitation link points: PUBLIC_BASE_URL; when it was not set (the config then holds
  // http://localhost:PORT), the address the request reached this server at.
  const baseUrl = (request: FastifyRequest) =>
    ctx.config.publicBaseUrl === `http://localhost:${ctx.config.port}`
      ? `${request.protocol}://${request.host}`
      : ctx.config.publicBaseUrl;

  // Who made an invitation: the login, or the key.
  const maker = (request: FastifyRequest) => request.principal!.console?.userId ?? request.principal!.keyId;

  return async (app) => {
    app.get(
      '/console/setup',
      {
        schema: {
          tags,
          operationId: 'getConsoleSetup',
          summary: 'Whether the installation is bootstrapped (the console’s first run is done)',
          response: { 200: ConsoleSetup },
        },
      },
      async () => ({ bootstrapped: await isBootstrapped(ctx.db) }),
    );

    app.post(
      '/console/bootstrap',
      {
        config: { errors: ['INVALID_BOOTSTRAP_TOKEN', 'ALREADY_BOOTSTRAPPED', 'FORBIDDEN'] },
        schema: {
          tags,
          operationId: 'bootstrapConsole',
          summary:
            'First run: create the partner and its first admin with the bootstrap token (once, shared with POST /partner/bootstrap), signed in',
          body: BootstrapConsoleBody,
          response: { 201: ConsoleSessionSchema },
        },
      },
      async (request, reply) => {
        checkOrigin(request, ctx.config.publicBaseUrl);
        return signedIn(reply, await bootstrapConsole(ctx, request.body, request));
      },
    );

    app.post(
      '/console/sessions',
      {
        config: { errors: ['INVALID_CREDENTIALS', 'RATE_LIMITED', 'FORBIDDEN'] },
        schema: {
          tags,
          operationId: 'signIn',
          summary: 'Sign in with an email and a password: sets the session cookie, answers the CSRF token',
          body: SignInBody,
          response: { 201: ConsoleSessionSchema },
        },
      },
      async (request, reply) => {
        checkOrigin(request, ctx.config.publicBaseUrl);
        return signedIn(reply, await signIn(ctx, request.body, request));
      },
    );

    app.get(
      '/console/session',
      {
        config: session,
        schema: {
          tags,
          operationId: 'getConsoleSession',
          summary: 'The current session: who is signed in, in which role, and its CSRF token',
          response: { 200: ConsoleSessionSchema },
        },
      },
      async (request) => {
        const session = await ctx.sessions.resolve(currentSession(request).token, ctx.now());
        if (!session) throw new ApiError('INVALID_SESSION');
        return toSession(session);
      },
    );

    app.delete(
      '/console/session',
      {
        config: session,
        schema: {
          tags,
          operationId: 'signOut',
          summary: 'Sign out: ends this session and clears its cookie',
          response: { 204: Type.Null({ description: 'Signed out.' }) },
        },
      },
      async (request, reply) => {
        const { sessionId, token } = currentSession(request);
        await endSession(ctx, ctx.db, sessionId, token);
        clearSessionCookie(ctx, reply);
        reply.status(204);
      },
    );

    app.post(
      '/console/session/sign-out-everywhere',
      {
        config: session,
        schema: {
          tags,
          operationId: 'signOutEverywhere',
          summary: 'End every session of this login, this one included',
          response: { 200: SignedOutEverywhere },
        },
      },
      async (request, reply) => {
        const ended = await endAllSessions(ctx, ctx.db, currentSession(request).userId);
        clearSessionCookie(ctx, reply);
        return { ended };
      },
    );

    app.post(
      '/partner/console-invitations',
      {
        config: { access: 'partner', errors: ['CONFLICT'] },
        schema: {
          tags: ['partner', ...tags],
          operationId: 'invitePartnerAdmin',
          summary: 'Invite a partner admin: a one-time link, shown once, valid 7 days',
          body: PartnerInvitationBody,
          response: { 201: ConsoleInvitation },
        },
      },
      async (request, reply) => {
        const made = await invitePartnerAdmin(ctx, partnerOf(request), request.body, maker(request));
        reply.status(201);
        return toInvitation(made.row, made.token, baseUrl(request));
      },
    );

    app.post(
      '/team/members/:id/invitation',
      {
        config: { access: 'account', errors: ['RESOURCE_NOT_FOUND', 'CONFLICT'] },
        schema: {
          tags: ['team', ...tags],
          operationId: 'inviteTeamMember',
          summary: 'Give a team member a console login: a one-time link, shown once, valid 7 days',
          params: MemberIdParams,
          response: { 201: ConsoleInvitation },
        },
      },
      async (request, reply) => {
        if (request.principal!.mode === 'sandbox')
          throw new ApiError('FORBIDDEN', 'A sandbox key may not invite: use a live key or the console.');
        const made = await inviteMember(ctx, accountOf(request).id, request.params.id, maker(request));
        reply.status(201);
        return toInvitation(made.row, made.token, baseUrl(request));
      },
    );

    app.post(
      '/console/invitations/accept',
      {
        config: { errors: ['RESOURCE_NOT_FOUND', 'CONFLICT', 'FORBIDDEN'] },
        schema: {
          tags,
          operationId: 'acceptConsoleInvitation',
          summary: 'Accept an invitation with a password: makes the login, signed in (the link works once)',
          body: AcceptInvitationBody,
          response: { 201: ConsoleSessionSchema },
        },
      },
      async (request, reply) => {
        checkOrigin(request, ctx.config.publicBaseUrl);
        return signedIn(reply, await acceptInvitation(ctx, request.body, request));
      },
    );
  };
}
