// The access policy every route declares in its config: who may call it, and which plan feature it
// needs. One onRequest hook applies it, in this order:
//   API key or console session (401) → partner/account resolution (400/403/404) → account status
//   (403) → plan API access (402) → per-second limit (429) → monthly quota (429) → route feature (402).
// A request without X-Api-Key that carries the `tidings_session` cookie is a console call: its
// session stands for a key (console-principal.ts), a partner admin's for a partner key, an account
// admin's for a live key of its account, an agent's for the same on routes marked `agents` only;
// every change it makes needs the session's CSRF token.
// A call counts against the month once it passes the rate limiter, whatever its outcome; the count
// is kept in the process and written in batches (usage-meter.ts), so it costs no statement here.
// The steps answer at once what they have at hand (a cached key and account, the in-process limiter,
// a quota lease) and a promise only when they must wait: a call with everything cached passes the
// whole policy without a promise or a turn of the microtask queue (the hook is callback-style).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config.ts';
import { andThen, type Maybe } from '../async/maybe.ts';
import type { Sql } from '../database/db.ts';
import { ApiError, type ErrorCode, notFound } from '../http/errors.ts';
import { type AccountSnapshot, type Authenticator, isActive, type Principal } from './auth.ts';
import { type ConsoleRole, type ConsoleSessions, checkCsrf, sessionToken } from './console-principal.ts';
import type { KeyScope } from './key-text.ts';
import { type RateLimits, secondsUntilNextPeriod } from './rate-limits.ts';
import { monthTotal, type UsageMeter } from './usage-meter.ts';

/** `session`: any signed-in console user, on the console's own routes (no account acted on). */
export type Access = 'public' | 'bootstrap' | 'session' | 'partner' | 'account';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Who may call the route; routes without it are public. */
    access?: Access;
    /** A console agent's session may call it (the inbox's routes); other account routes refuse agents. */
    agents?: boolean;
    /** A plan-gated feature group the account must have (402 otherwise). */
    feature?: Exclude<Feature, 'api_access'>;
    /** Error codes of the route's own logic, for its documentation (access errors are added). */
    errors?: ErrorCode[];
    /**
     * A body the route reads as bytes (a provider's signed callback), not through a body schema:
     * its schema and media type for the OpenAPI document only. Such a route takes a body.
     */
    rawBody?: { schema: unknown; contentType: string };
    /**
     * The body's fields are all optional to the schema but the handler needs one of them (400
     * otherwise): the document then says the body is required and not empty.
     */
    bodyRequired?: boolean;
  }
  interface FastifyRequest {
    principal: Principal | null;
  }
}

/** A plan-gated feature group: a route may require one of the account's plan (`feature`). */
export type Feature = 'api_access' | 'automation' | 'voice';

/**
 * What the policy asks of the plan table (modules/accounts/plans.ts gives it, in app.ts): the kernel
 * holds the order of the checks, the plans hold the numbers and the words.
 */
export interface PlanRules {
  /** The account's limits in force: its quota (null: none) and per-second rate, after the operator's overrides. */
  limitsOf(
    planCode: string,
    overrides: { monthlyQuota: number | null; ratePerSecond: number | null },
  ): { monthlyQuota: number | null; ratePerSecond: number };
  hasFeature(planCode: string, addons: readonly string[], feature: Feature): boolean;
  /** What a 402 says when the plan lacks the feature. */
  refusalOf(feature: Feature): string;
}

export interface AccessDeps {
  config: Config;
  plans: PlanRules;
  sql: Sql;
  auth: Authenticator;
  sessions: ConsoleSessions;
  rateLimits: RateLimits;
  usage: UsageMeter;
  now: () => Date;
}

function singleHeader(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function quotaHeaders(reply: FastifyReply, limit: number, used: number) {
  reply.header('x-quota-limit', String(limit));
  reply.header('x-quota-remaining', String(Math.max(0, limit - used)));
}

// X-RateLimit-Remaining: how many more requests would be admitted right now; X-RateLimit-Reset:
// when (epoch seconds, rounded up) the oldest request counted in the last second stops counting,
// so one more place is free (after a 429, when the next request will be admitted); Retry-After:
// the whole seconds until then, at least 1 (always 1, as the limit's span is one second).
function applyRateLimit(
  deps: AccessDeps,
  reply: FastifyReply,
  bucket: string,
  perSecond: number,
  beforeRefusal?: () => Promise<void>,
): Maybe<void> {
  // The in-process limiter answers without a promise; Redis with one.
  return andThen(deps.rateLimits.consume(bucket, perSecond), (decision) => {
    const resetAt = Math.ceil((deps.now().getTime() + decision.resetInMs) / 1000);
    reply.header('x-ratelimit-limit', String(decision.limit));
    reply.header('x-ratelimit-remaining', String(decision.remaining));
    reply.header('x-ratelimit-reset', String(resetAt));
    if (!decision.allowed) return refuseRate(decision.resetInMs, beforeRefusal);
  });
}

async function refuseRate(resetInMs: number, beforeRefusal?: () => Promise<void>): Promise<never> {
  await beforeRefusal?.();
  const seconds = Math.max(1, Math.ceil(resetInMs / 1000));
  throw new ApiError('RATE_LIMITED', `Rate limit exceeded. Retry after ${seconds} second(s).`, {
    headers: { 'retry-after': String(seconds) },
  });
}

/** Who calls: an API key, or a console session standing for one. */
interface Caller {
  id: string;
  scope: KeyScope;
  partnerId: string | null;
  accountId: string | null;
  console?: { userId: string; role: ConsoleRole; sessionId: string; memberId: string | null };
}

function resolveAccount(deps: AccessDeps, request: FastifyRequest, key: Caller): Maybe<AccountSnapshot> {
  const named = singleHeader(request, 'x-account-id');
  if (key.scope === 'partner') {
    if (!named) {
      throw new ApiError(
        'INVALID_REQUEST',
        'A partner key must name the account it acts on in X-Account-Id.',
        {
          details: [{ field: 'X-Account-Id', issue: 'is required with a partner key' }],
        },
      );
    }
    return andThen(deps.auth.account(named), (account) => {
      // Another partner's account, or one of no partner, is invisible to this one.
      if (!account || account.partnerId !== key.partnerId) throw notFound('account');
      return account;
    });
  }
  const own = key.accountId;
  if (named && named !== own) {
    throw new ApiError('FORBIDDEN', 'X-Account-Id names an account this key does not belong to.');
  }
  if (!own) throw new ApiError('INVALID_API_KEY');
  return andThen(deps.auth.account(own), (account) => {
    if (!account) throw new ApiError('INVALID_API_KEY');
    return account;
  });
}

const ROLE_SCOPE: Record<ConsoleRole, KeyScope> = {
  partner_admin: 'partner',
  account_admin: 'live',
  agent: 'live',
};

/**
 * The console session of a request without X-Api-Key (401 INVALID_SESSION when it has ended), its
 * CSRF token checked on a change. Its principal's keyId is the login's id (lgn_…), so whatever names
 * the caller by keyId (an invitation's maker) names the person; idempotency is keyed by the account
 * or partner, not by keyId, so it needs nothing of its own.
 */
async function sessionCaller(
  deps: AccessDeps,
  request: FastifyRequest,
  token: string | undefined,
  now: Date,
) {
  const session = await deps.sessions.resolve(token, now);
  if (!session) throw new ApiError('INVALID_SESSION');
  checkCsrf(request, session, deps.config.publicBaseUrl);
  return {
    id: session.userId,
    scope: ROLE_SCOPE[session.role],
    partnerId: session.partnerId,
    accountId: session.accountId,
    console: {
      userId: session.userId,
      role: session.role,
      sessionId: session.id,
      memberId: session.memberId,
    },
  } satisfies Caller;
}

/** What a route declares about who may call it (its config, or a row of the route table). */
export interface RouteAccess {
  access?: Access;
  agents?: boolean;
}

/**
 * The refusal a caller of this kind (its key's scope, its console role) gets on a route, decided
 * before any account is looked at; null when it may call it. The access hook applies it to every
 * request, and what a caller may read through events, streams and webhooks is decided by it too
 * (modules/events/visibility.ts), so the two cannot differ.
 */
export function refusalOf(
  caller: { scope: KeyScope; role?: ConsoleRole },
  route: RouteAccess,
): ApiError | null {
  const access = route.access ?? 'public';
  if (access === 'public' || access === 'bootstrap') return null;
  if (access === 'session') return caller.role ? null : new ApiError('INVALID_SESSION');
  if (caller.role === 'agent' && !route.agents) {
    return new ApiError(
      'FORBIDDEN',
      'An agent may use the inbox only (conversations, messages, contacts, templates, media, events): ask an account admin.',
    );
  }
  if (access === 'partner' && caller.scope !== 'partner') {
    return new ApiError(
      'FORBIDDEN',
      'Partner endpoints need a partner key or a partner admin’s console session.',
    );
  }
  return null;
}

/** Whether this principal may call a route of this access (refusalOf, for a resolved principal). */
export function mayCall(principal: Pick<Principal, 'keyScope' | 'console'>, route: RouteAccess): boolean {
  return refusalOf({ scope: principal.keyScope, role: principal.console?.role }, route) === null;
}

function callerOf(deps: AccessDeps, request: FastifyRequest, access: Access, now: Date): Maybe<Caller> {
  const keyText = singleHeader(request, 'x-api-key');
  const token = sessionToken(request);
  if (access === 'session') return sessionCaller(deps, request, token, now);
  if (keyText === undefined && token !== undefined) return sessionCaller(deps, request, token, now);
  return andThen(deps.auth.authenticate(keyText, now), (key) => ({
    id: key.id,
    scope: key.scope,
    partnerId: key.partnerId,
    accountId: key.accountId,
  }));
}

function authorize(
  deps: AccessDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  access: Access,
): Maybe<void> {
  const now = deps.now();
  return andThen(callerOf(deps, request, access, now), (key) => {
    const principal: Principal = {
      keyId: key.id,
      keyScope: key.scope,
      partnerId: key.partnerId,
      account: null,
      mode: key.scope === 'sandbox' ? 'sandbox' : 'live',
      ...(key.console ? { console: key.console } : {}),
    };
    if (access === 'session') {
      request.principal = principal;
      return;
    }
    const refusal = refusalOf({ scope: key.scope, role: key.console?.role }, request.routeOptions.config);
    if (refusal) throw refusal;
    if (access === 'partner') {
      request.principal = principal;
      return applyRateLimit(deps, reply, `partner:${key.partnerId}`, deps.config.partnerRatePerSecond);
    }
    return andThen(resolveAccount(deps, request, key), (account) =>
      admitAccountCall(deps, request, reply, { ...principal, account }, now),
    );
  });
}

/** The account's status, plan, per-second limit, quota and the route's feature, in that order. */
function admitAccountCall(
  deps: AccessDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  principal: Principal & { account: AccountSnapshot },
  now: Date,
): Maybe<void> {
  const { account } = principal;
  request.principal = principal;
  if (!isActive(account.status)) {
    throw new ApiError('ACCOUNT_SUSPENDED', `The account is ${account.status.toLowerCase()}.`);
  }
  const { plans } = deps;
  if (!plans.hasFeature(account.planCode, account.addons, 'api_access')) {
    throw new ApiError('PLAN_UPGRADE_REQUIRED', plans.refusalOf('api_access'));
  }
  const limits = plans.limitsOf(account.planCode, {
    monthlyQuota: deps.config.monthlyQuotaOverride,
    ratePerSecond: deps.config.rateLimitOverride,
  });
  const quotaLimit = limits.monthlyQuota;
  const perSecond = limits.ratePerSecond;
  const limited = applyRateLimit(deps, reply, `account:${account.id}`, perSecond, async () => {
    // A refused call is not counted, but its reply still shows where the month stands (docs/api.md:
    // every authenticated response carries the quota headers). The count this process's lease saw
    // serves, so a flood of refused calls costs the database nothing; best effort: the 429 matters.
    if (quotaLimit === null) return;
    const used =
      deps.usage.lastSeen(account.id, now) ?? (await monthTotal(deps.sql, account.id, now).catch(() => null));
    if (used !== null) quotaHeaders(reply, quotaLimit, used);
  });
  return andThen(limited, () =>
    andThen(deps.usage.admit(account.id, quotaLimit, now), (quota) => {
      if (quota.used !== null) principal.monthCalls = quota.used;
      if (quota.limit !== null) quotaHeaders(reply, quota.limit, quota.used ?? quota.limit);
      if (!quota.allowed) {
        // The quota renews when the next calendar month (UTC) begins; every 429 carries Retry-After.
        throw new ApiError('QUOTA_EXCEEDED', undefined, {
          headers: { 'retry-after': String(secondsUntilNextPeriod(now)) },
        });
      }
      checkFeature(request, plans, account);
    }),
  );
}

function checkFeature(request: FastifyRequest, plans: PlanRules, account: AccountSnapshot): void {
  const feature = request.routeOptions.config.feature;
  if (feature && !plans.hasFeature(account.planCode, account.addons, feature)) {
    throw new ApiError('PLAN_UPGRADE_REQUIRED', plans.refusalOf(feature));
  }
}

export function installAccessPolicy(app: FastifyInstance, deps: AccessDeps): void {
  app.decorateRequest('principal', null);
  app.addHook('onRequest', (request, reply, done) => {
    const access = request.routeOptions.config?.access ?? 'public';
    if (access === 'public' || access === 'bootstrap') return done();
    let pending: Maybe<void>;
    try {
      pending = authorize(deps, request, reply, access);
    } catch (err) {
      return done(err as Error);
    }
    if (pending instanceof Promise) pending.then(() => done(), done);
    else done();
  });
}

/** The account an account-scoped route acts on (set by the access policy). */
export function accountOf(request: FastifyRequest): AccountSnapshot {
  const account = request.principal?.account;
  if (!account) throw new Error('route without account access asked for the account');
  return account;
}

/** The partner a partner-scoped route acts for. */
export function partnerOf(request: FastifyRequest): string {
  const partnerId = request.principal?.partnerId;
  if (!partnerId) throw new Error('route without partner access asked for the partner');
  return partnerId;
}

/** The config of an account route on one resource: 404 for an id it cannot see. */
export const ON_RESOURCE = { access: 'account' as const, errors: ['RESOURCE_NOT_FOUND' as ErrorCode] };

/** The same for a change that may conflict with the resource's state (409). */
export const ON_RESOURCE_OR_CONFLICT = {
  access: 'account' as const,
  errors: ['RESOURCE_NOT_FOUND', 'CONFLICT'] as ErrorCode[],
};
