// Embedded Signup completed on the server (POST /account/channel/embedded-signup): the client went
// through Meta's popup on the partner's app, and the console (or any API client) hands over what it
// gave: the code, the WABA id and the phone number id. The steps, as Meta's Tech Provider pages
// order them (docs/history/issue-46-meta.md):
//   exchange_code    the code for the client's business token (the app's id and secret);
//   subscribe_app    the partner's app to the WABA's webhooks;
//   register_number  the number on the Cloud API, with a six-digit PIN generated here (skipped in
//                    coexistence: the number stays on the WhatsApp Business app; skipped when Meta
//                    shows the number on the Cloud API already);
//   read_number      its name, quality, tier and throughput;
//   save_channel     the account's channel, with the token and PIN sealed; channel.connected.
// Each step's end is written before the next begins, so whoever comes next (the same request again,
// or the resume job after a crash) starts at the first step not done. Only the code cannot be
// asked twice (Meta takes it once): the token is kept as soon as it comes. Registering is the step
// that must never be repeated blindly: Meta's own word on the number (its platform_type) decides,
// so a registration whose answer was lost is not sent again.
//
// One runner at a time: a lease (`claimed_until`) rather than a row lock, since a lock would hold a
// transaction open across Meta's answers (and PGlite has one connection).
import { createHash, randomInt } from 'node:crypto';
import type { Channels } from '../../channels/registry.ts';
import { DEFAULT_SANDBOX, throughputOf, type WhatsAppSettings } from '../../channels/settings.ts';
import type { GraphFailure, GraphResult } from '../../channels/whatsapp-cloud/onboarding.ts';
import type { SecretBox } from '../../kernel/crypto/secrets.ts';
import type { Database, Sql } from '../../kernel/database/db.ts';
import { conflict, invalid } from '../../kernel/http/errors.ts';
import type { JobDefinition, Jobs } from '../../kernel/jobs/jobs.ts';
import type { EventOutbox } from '../../kernel/outbox/events.ts';
import { COEXISTENCE_SYNC_JOB, type SyncJobData } from './coexistence-sync.ts';
import { refusalOf, STEP_NAMES, type Step, takenBy } from './embedded-signup-errors.ts';
import { type PartnerWhatsAppApp, partnerAppOfAccount } from './partner-app.ts';
import { accountWithNumber, loadChannel, saveChannel } from './repo.ts';
import { numberView } from './signals.ts';

export const ONBOARDING_RESUME_JOB = 'channel.onboarding-resume';
/**
 * How long a runner holds an onboarding between two steps (each step's end renews it): the
 * longest step is two Graph calls, each bounded by the provider timeout. Short, so that a client
 * retrying after a crash waits little, and the resume job comes soon after.
 */
const leaseSecondsOf = (s: SignupServices) => Math.ceil((2 * s.config.providerTimeoutMs) / 1000) + 2;
/** Coexistence numbers: Meta's throughput for a number also on the Business app (20 a second). */
export const COEXISTENCE_THROUGHPUT = 20;

export type OnboardingMode = 'cloud_api' | 'coexistence';

export interface SignupInput {
  code: string;
  wabaId: string;
  /** Left out in coexistence (Meta's FINISH_WHATSAPP_BUSINESS_APP_ONBOARDING names only the WABA). */
  phoneNumberId?: string;
  mode?: OnboardingMode;
}

/** The onboarding's key while its number is not known yet: the WABA's. */
const wabaKey = (wabaId: string) => `waba:${wabaId}`;

export interface SignupServices {
  db: Database;
  channels: Channels;
  secrets: SecretBox;
  events: EventOutbox;
  jobs: Jobs;
  config: { providerTimeoutMs: number };
  now: () => Date;
}

interface Row {
  account_id: string;
  phone_number_id: string;
  business_account_id: string;
  mode: OnboardingMode;
  status: 'in_progress' | 'failed' | 'connected';
  code_hash: string;
  secrets_sealed: string;
  steps: Partial<Record<Step, string>>;
  error: OnboardingError | null;
  claimed_until: Date | null;
  created_at: Date;
  updated_at: Date;
}

interface Sealed {
  /** Until exchanged. */
  code: string | null;
  accessToken?: string;
  pin: string;
}

export interface OnboardingError {
  step: Step;
  providerCode: number | null;
  providerSubcode: number | null;
  message: string;
  at: string;
}

/** A claimed onboarding, its secrets open, as the steps run it. */
interface Claimed {
  accountId: string;
  phoneNumberId: string;
  wabaId: string;
  mode: OnboardingMode;
  codeHash: string;
  steps: Partial<Record<Step, string>>;
  sealed: Sealed;
  registration?: { platformType: string | null };
  number?: Omit<WhatsAppSettings, 'phoneNumberId' | 'businessAccountId'>;
}

interface ResumeJobData {
  accountId: string;
  phoneNumberId: string;
  codeHash: string;
}

const hashOf = (code: string) => createHash('sha256').update(code).digest('hex');
const newPin = () => String(randomInt(0, 1_000_000)).padStart(6, '0');

const COLUMNS = `account_id, phone_number_id, business_account_id, mode, status, code_hash, secrets_sealed,
  steps, error, claimed_until, created_at, updated_at`;

async function lockRow(sql: Sql, accountId: string, phoneNumberId: string): Promise<Row | null> {
  const { rows } = await sql.query<Row>(
    `SELECT ${COLUMNS} FROM channel_onboardings WHERE account_id = $1 AND phone_number_id = $2 FOR UPDATE`,
    [accountId, phoneNumberId],
  );
  return rows[0] ?? null;
}

/** The account's latest onboarding, as GET /account/channel/embedded-signup shows it. */
export async function latestOnboarding(sql: Sql, accountId: string) {
  const { rows } = await sql.query<Row>(
    `SELECT ${COLUMNS} FROM channel_onboardings WHERE account_id = $1 ORDER BY updated_at DESC LIMIT 1`,
    [accountId],
  );
  const row = rows[0];
  if (!row) return null;
  return {
    phoneNumberId: row.phone_number_id,
    wabaId: row.business_account_id,
    mode: row.mode,
    status: row.status,
    steps: STEP_NAMES.filter(
      (step) =>
        (row.mode === 'cloud_api' || step !== 'register_number') &&
        (step !== 'find_number' || row.steps[step]),
    ).map((step) => ({ step, finishedAt: row.steps[step] ?? null })),
    error: row.error,
    startedAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/**
 * Completes a signup: claims its onboarding (new, resumed, or started over for a new code), runs
 * the steps left, and answers the channel. Throws the step's refusal (embedded-signup-errors.ts).
 */
export async function completeSignup(s: SignupServices, accountId: string, input: SignupInput) {
  const app = await partnerAppOfAccount(s.db, s.secrets, accountId);
  if (!app) {
    throw conflict(
      "The account's partner has no Meta app set (PUT /partner/whatsapp-app), so there is no Embedded Signup to complete; connect the number with PUT /account/channel and an access token instead.",
    );
  }
  if ((input.mode ?? 'cloud_api') === 'cloud_api' && !input.phoneNumberId)
    throw invalid('phoneNumberId', 'is required (it may be left out in mode coexistence only)');
  if (input.phoneNumberId && (await accountWithNumber(s.db, input.phoneNumberId, accountId))) throw takenBy();
  const claimed = await claim(s, accountId, {
    ...input,
    phoneNumberId: input.phoneNumberId ?? wabaKey(input.wabaId),
  });
  if (claimed === 'connected') return loadChannel(s.db, accountId);
  await runSteps(s, app, claimed);
  return loadChannel(s.db, accountId);
}

/** Claims the onboarding for this request: a new row, or the existing one resumed or restarted. */
async function claim(
  s: SignupServices,
  accountId: string,
  input: Omit<SignupInput, 'phoneNumberId'> & { phoneNumberId: string },
): Promise<Claimed | 'connected'> {
  const codeHash = hashOf(input.code);
  const mode = input.mode ?? 'cloud_api';
  const now = s.now();
  const until = new Date(now.getTime() + leaseSecondsOf(s) * 1000);
  return s.db.transaction(async (tx) => {
    const row = await lockRow(tx, accountId, input.phoneNumberId);
    if (row && row.code_hash === codeHash && row.status === 'connected') return 'connected';
    if (row?.claimed_until && row.claimed_until > now) {
      throw conflict('This number is being connected by another request; retry in a minute.', [
        { field: 'phoneNumberId', issue: 'has an Embedded Signup under way' },
      ]);
    }
    const kept = row ? (JSON.parse(s.secrets.open(row.secrets_sealed)) as Sealed) : null;
    // The same code resumes where it stopped; a new one (the popup run again) starts over, keeping
    // the PIN: the number may already be registered with it.
    const resume = row !== null && row.code_hash === codeHash;
    const sealed: Sealed = resume ? kept! : { code: input.code, pin: kept?.pin ?? newPin() };
    const claimed: Claimed = {
      accountId,
      phoneNumberId: input.phoneNumberId,
      wabaId: resume ? row.business_account_id : input.wabaId,
      mode: resume ? row.mode : mode,
      codeHash,
      steps: resume ? { ...row.steps } : {},
      sealed,
    };
    await tx.query(
      `INSERT INTO channel_onboardings (account_id, phone_number_id, business_account_id, mode, status,
                                        code_hash, secrets_sealed, steps, error, claimed_until,
                                        created_at, updated_at)
       VALUES ($1, $2, $3, $4, 'in_progress', $5, $6, $7, NULL, $8, $9, $9)
       ON CONFLICT (account_id, phone_number_id) DO UPDATE
         SET business_account_id = EXCLUDED.business_account_id, mode = EXCLUDED.mode,
             status = 'in_progress', code_hash = EXCLUDED.code_hash,
             secrets_sealed = EXCLUDED.secrets_sealed, steps = EXCLUDED.steps, error = NULL,
             claimed_until = EXCLUDED.claimed_until, updated_at = EXCLUDED.updated_at,
             created_at = CASE WHEN channel_onboardings.code_hash = EXCLUDED.code_hash
                               THEN channel_onboardings.created_at ELSE EXCLUDED.created_at END`,
      [
        accountId,
        claimed.phoneNumberId,
        claimed.wabaId,
        claimed.mode,
        codeHash,
        s.secrets.seal(JSON.stringify(sealed)),
        JSON.stringify(claimed.steps),
        until,
        now,
      ],
    );
    // Should this process die mid-way, the job picks it up once the lease has run out.
    const data: ResumeJobData = { accountId, phoneNumberId: input.phoneNumberId, codeHash };
    await s.jobs.enqueue(tx, ONBOARDING_RESUME_JOB, data, { startAfterSeconds: leaseSecondsOf(s) + 3 });
    return claimed;
  });
}

/** Claims an onboarding whose lease has run out, for the resume job; null when it is not to resume. */
async function claimStale(s: SignupServices, data: ResumeJobData): Promise<Claimed | null | 'busy'> {
  const now = s.now();
  return s.db.transaction(async (tx) => {
    const row = await lockRow(tx, data.accountId, data.phoneNumberId);
    if (!row || row.code_hash !== data.codeHash || row.status !== 'in_progress') return null;
    if (row.claimed_until && row.claimed_until > now) return 'busy';
    await tx.query(
      'UPDATE channel_onboardings SET claimed_until = $3 WHERE account_id = $1 AND phone_number_id = $2',
      [data.accountId, data.phoneNumberId, new Date(now.getTime() + leaseSecondsOf(s) * 1000)],
    );
    return {
      accountId: row.account_id,
      phoneNumberId: row.phone_number_id,
      wabaId: row.business_account_id,
      mode: row.mode,
      codeHash: row.code_hash,
      steps: { ...row.steps },
      sealed: JSON.parse(s.secrets.open(row.secrets_sealed)) as Sealed,
    };
  });
}

/** Writes a step's end (and the secrets as they now are), renewing the lease. */
async function recordStep(s: SignupServices, c: Claimed, step: Step): Promise<void> {
  const now = s.now();
  c.steps[step] = now.toISOString();
  await s.db.query(
    `UPDATE channel_onboardings SET steps = $3, secrets_sealed = $4, claimed_until = $5, updated_at = $6
      WHERE account_id = $1 AND phone_number_id = $2 AND code_hash = $7`,
    [
      c.accountId,
      c.phoneNumberId,
      JSON.stringify(c.steps),
      s.secrets.seal(JSON.stringify(c.sealed)),
      new Date(now.getTime() + leaseSecondsOf(s) * 1000),
      now,
      c.codeHash,
    ],
  );
}

/** Writes the refusal: failed for good, or (Meta unreachable) still in progress for the next try. */
async function recordFailure(s: SignupServices, c: Claimed, step: Step, f: GraphFailure): Promise<void> {
  const now = s.now();
  const error: OnboardingError = {
    step,
    providerCode: f.metaCode,
    providerSubcode: f.metaSubcode,
    message: f.message,
    at: now.toISOString(),
  };
  await s.db.query(
    `UPDATE channel_onboardings SET status = $3, error = $4, claimed_until = NULL, updated_at = $5
      WHERE account_id = $1 AND phone_number_id = $2 AND code_hash = $6`,
    [
      c.accountId,
      c.phoneNumberId,
      f.retry ? 'in_progress' : 'failed',
      JSON.stringify(error),
      now,
      c.codeHash,
    ],
  );
}

/**
 * The number of a coexistence signup that named only its WABA: the WABA's one number (or the one on
 * the Business app, of several). The onboarding is re-keyed by it, and the number checked as one
 * given would have been.
 */
async function findNumber(s: SignupServices, c: Claimed, token: string): Promise<GraphResult<object>> {
  const listed = await s.channels.whatsappOnboarding().listNumbers(token, c.wabaId);
  if (!listed.ok) return listed;
  const onApp = listed.numbers.filter((n) => n.onBusinessApp);
  const chosen = listed.numbers.length === 1 ? listed.numbers[0] : onApp.length === 1 ? onApp[0] : undefined;
  if (!chosen) {
    await recordFailure(s, c, 'find_number', {
      ok: false,
      metaCode: null,
      metaSubcode: null,
      status: null,
      message: `the WhatsApp Business Account has ${listed.numbers.length} numbers`,
      retry: false,
      retryAfterSeconds: null,
    });
    throw invalid(
      'phoneNumberId',
      `is required: the WhatsApp Business Account has ${listed.numbers.length} numbers, and Meta's answer does not say which was connected`,
    );
  }
  if (await accountWithNumber(s.db, chosen.id, c.accountId)) {
    await s.db.query('DELETE FROM channel_onboardings WHERE account_id = $1 AND phone_number_id = $2', [
      c.accountId,
      c.phoneNumberId,
    ]);
    throw takenBy();
  }
  await s.db.transaction(async (tx) => {
    // An earlier onboarding of the same number gives way to this one.
    await tx.query('DELETE FROM channel_onboardings WHERE account_id = $1 AND phone_number_id = $2', [
      c.accountId,
      chosen.id,
    ]);
    await tx.query(
      'UPDATE channel_onboardings SET phone_number_id = $3 WHERE account_id = $1 AND phone_number_id = $2',
      [c.accountId, c.phoneNumberId, chosen.id],
    );
  });
  c.phoneNumberId = chosen.id;
  return { ok: true };
}

/** Runs the steps not done yet; throws the refusal of the first Meta refuses, once written down. */
async function runSteps(s: SignupServices, app: PartnerWhatsAppApp, c: Claimed): Promise<void> {
  const meta = s.channels.whatsappOnboarding();
  const fail = async (step: Step, f: GraphFailure) => {
    await recordFailure(s, c, step, f);
    throw refusalOf(step, f);
  };
  if (!c.steps.exchange_code) {
    const exchanged = await meta.exchangeCode(app, c.sealed.code ?? '');
    if (!exchanged.ok) return fail('exchange_code', exchanged);
    c.sealed = { ...c.sealed, code: null, accessToken: exchanged.accessToken };
    await recordStep(s, c, 'exchange_code');
  }
  const token = c.sealed.accessToken ?? '';
  if (c.phoneNumberId.startsWith('waba:')) {
    const found = await findNumber(s, c, token);
    if (!found.ok) return fail('find_number', found);
    await recordStep(s, c, 'find_number');
  }
  if (!c.steps.subscribe_app) {
    const subscribed = await meta.subscribeApp(token, c.wabaId);
    if (!subscribed.ok) return fail('subscribe_app', subscribed);
    await recordStep(s, c, 'subscribe_app');
  }
  if (c.mode === 'cloud_api' && !c.steps.register_number) {
    // Meta's word first: a number already on the Cloud API (a registration whose answer was lost,
    // or one made before) is not registered again.
    const read = await meta.readRegistration(token, c.phoneNumberId);
    if (!read.ok) return fail('register_number', read);
    if (read.platformType !== 'CLOUD_API') {
      const registered = await meta.register(token, c.phoneNumberId, c.sealed.pin);
      if (!registered.ok) return fail('register_number', registered);
    }
    await recordStep(s, c, 'register_number');
  }
  const number = await s.channels
    .whatsapp({ phoneNumberId: c.phoneNumberId, businessAccountId: c.wabaId }, token)
    .fetchPhoneNumber();
  if (!number.ok) {
    return fail('read_number', {
      ok: false,
      metaCode: number.error.providerCode,
      metaSubcode: null,
      status: null,
      message: number.error.message,
      retry: number.retryable,
      retryAfterSeconds: null,
    });
  }
  await recordStep(s, c, 'read_number');
  await saveConnected(s, c, {
    displayPhoneNumber: number.displayPhoneNumber,
    verifiedName: number.verifiedName,
    throughputPerSecond:
      c.mode === 'coexistence' ? COEXISTENCE_THROUGHPUT : throughputOf(number.throughputLevel),
    messagingLimitTier: number.messagingLimitTier,
    qualityRating: number.qualityRating,
  });
}

/** The last step: the channel saved and the onboarding connected, in one transaction. */
async function saveConnected(
  s: SignupServices,
  c: Claimed,
  number: Omit<WhatsAppSettings, 'phoneNumberId' | 'businessAccountId'>,
): Promise<void> {
  const now = s.now();
  const taken = await s.db.transaction(async (tx) => {
    const row = await lockRow(tx, c.accountId, c.phoneNumberId);
    // Started over meanwhile with another code: that run saves the channel.
    if (!row || row.code_hash !== c.codeHash) return false;
    if (await accountWithNumber(tx, c.phoneNumberId, c.accountId)) {
      const error: OnboardingError = {
        step: 'save_channel',
        providerCode: null,
        providerSubcode: null,
        message: takenBy().message,
        at: now.toISOString(),
      };
      await tx.query(
        `UPDATE channel_onboardings SET status = 'failed', error = $3, claimed_until = NULL, updated_at = $4
          WHERE account_id = $1 AND phone_number_id = $2`,
        [c.accountId, c.phoneNumberId, JSON.stringify(error), now],
      );
      return true;
    }
    const stored = await loadChannel(tx, c.accountId);
    const whatsapp: WhatsAppSettings = {
      phoneNumberId: c.phoneNumberId,
      businessAccountId: c.wabaId,
      ...number,
      onboarding: { via: 'embedded_signup', mode: c.mode, at: now.toISOString() },
    };
    await saveChannel(
      tx,
      c.accountId,
      {
        provider: 'whatsapp_cloud',
        sandbox: stored.sandbox ?? DEFAULT_SANDBOX,
        whatsapp,
        secretsSealed: s.channels.sealSecrets({ accessToken: c.sealed.accessToken ?? '', pin: c.sealed.pin }),
      },
      now,
    );
    c.steps.save_channel = now.toISOString();
    await tx.query(
      `UPDATE channel_onboardings SET status = 'connected', steps = $3, secrets_sealed = $4,
              claimed_until = NULL, error = NULL, updated_at = $5
        WHERE account_id = $1 AND phone_number_id = $2`,
      [
        c.accountId,
        c.phoneNumberId,
        JSON.stringify(c.steps),
        // The token lives in the channel now; the PIN is kept for a later registration.
        s.secrets.seal(JSON.stringify({ code: null, pin: c.sealed.pin } satisfies Sealed)),
        now,
      ],
    );
    await s.events.emit(tx, {
      type: 'channel.connected',
      accountId: c.accountId,
      data: { whatsapp: numberView(whatsapp), via: 'embedded_signup', mode: c.mode },
    });
    // A coexistence number's contacts and history are asked for once the channel can receive them.
    if (c.mode === 'coexistence') {
      const data: SyncJobData = { accountId: c.accountId, phoneNumberId: c.phoneNumberId };
      await s.jobs.enqueue(tx, COEXISTENCE_SYNC_JOB, data);
    }
    return false;
  });
  // The number became another account's while its steps ran: told like any refusal.
  if (taken) throw takenBy();
}

/**
 * Resumes an onboarding left behind (its runner died): runs the steps left once the lease is out.
 * Meta unreachable: thrown, pg-boss tries again; a refusal is written down for the next request.
 */
export function onboardingResumeJob(s: SignupServices): JobDefinition<ResumeJobData> {
  return {
    name: ONBOARDING_RESUME_JOB,
    retryLimit: 10,
    retryDelaySeconds: 60,
    expireInSeconds: leaseSecondsOf(s) * 5,
    handle: async (data) => {
      const claimed = await claimStale(s, data);
      if (claimed === null) return;
      if (claimed === 'busy') throw new Error('the onboarding is held by a runner; tried again later');
      const app = await partnerAppOfAccount(s.db, s.secrets, data.accountId);
      if (!app) return;
      try {
        await runSteps(s, app, claimed);
      } catch (err) {
        // A refusal for good is written down (status failed); only Meta's unavailability retries.
        const { rows } = await s.db.query<{ status: string }>(
          'SELECT status FROM channel_onboardings WHERE account_id = $1 AND phone_number_id = $2',
          [data.accountId, data.phoneNumberId],
        );
        if (rows[0]?.status === 'in_progress') throw err;
      }
    },
  };
}
