// The dialler: places queued calls, and plays sandbox calls (docs/voice.md § Placing calls). It
// runs in every process that runs workers, each loop round in three parts:
//   1. Due calls are taken FOR UPDATE SKIP LOCKED; each takes a slot of its account's calls per
//      second (campaign-shared/rate-slots.ts: exact across processes) and its wallet hold, and is leased; all commit
//      before any provider is asked. A call without a slot stays queued for the next second.
//   2. Each is placed, and the outcome recorded: placed → initiated with the provider's id;
//      refused → failed; a passing failure → queued again after a backoff (at most MAX_DIALS
//      tries); in doubt → left leased.
//   3. A queued call still leased without the provider's id after its lease (the process died
//      while placing it, or the provider's answer never came) is failed PROVIDER_UNKNOWN_OUTCOME:
//      never placed twice, since a second call to a person is worse than a lost one.
// Sandbox calls' simulations (channels/sandbox/voice-simulator.ts) are stepped by the same loop:
// a step due is leased, played (its requests through the app's own callback routes), and its next
// state written with the keys it used, so a restart goes on where it stopped.
import type { FastifyBaseLogger } from 'fastify';
import type { Channels } from '../../channels/registry.ts';
import { sandboxCallee, sandboxVoiceToken } from '../../channels/sandbox/voice.ts';
import { playStep, type SimState, startSimulation } from '../../channels/sandbox/voice-simulator.ts';
import { signTwilioRequest } from '../../channels/twilio-voice/callbacks.ts';
import type { FormParams, PlaceOutcome } from '../../channels/voice.ts';
import { PollingLoop } from '../../kernel/async/polling-loop.ts';
import type { Database, Tx } from '../../kernel/database/db.ts';
import type { EventOutbox } from '../../kernel/outbox/events.ts';
import { planOf } from '../accounts/index.ts';
import { pruneSlots, takeSlots } from '../campaign-shared/index.ts';
import { ERASED } from '../erasure/index.ts';
import type { PriceTable } from '../pricing/index.ts';
import { callUrls, loadVoiceChannel } from '../voice-channel/index.ts';
import { holdForCall } from './billing.ts';
import type { CallRow } from './repo.ts';
import { findCall, updateCall } from './repo.ts';
import { hangUp } from './service.ts';
import { applyCallUpdate } from './status.ts';

/** Tries of one call before a passing failure fails it. */
const MAX_DIALS = 5;
/** Calls taken per round. */
const BATCH = 20;

/** The simulation's row was told to end while a step of another phase was played. */
const ENDED_MEANWHILE = `sim->>'phase' = 'end' AND $6::text <> 'end'`;

export interface DialerDeps {
  db: Database;
  events: EventOutbox;
  channels: Channels;
  prices: PriceTable;
  now: () => Date;
  log: FastifyBaseLogger;
  config: {
    publicBaseUrl: string;
    secretsKey: string | null;
    voicePollMs: number;
    voiceSandboxStepMs: number;
    voiceLeaseMs: number;
  };
  /**
   * Makes the due calls of running voice campaigns (voice-campaigns/pacer.ts, given in app.ts),
   * first in each round so that the round places them; answers how many it made.
   */
  paceCampaigns: () => Promise<number>;
  /** Posts a request to this app's own routes (the simulator's callbacks). */
  inject: (request: {
    method: 'POST';
    url: string;
    payload: string;
    headers: Record<string, string>;
  }) => Promise<{ statusCode: number; body: string }>;
}

export class VoiceDialer {
  readonly #d: DialerDeps;
  readonly #loop: PollingLoop;
  #prunedAt = 0;

  constructor(deps: DialerDeps) {
    this.#d = deps;
    this.#loop = new PollingLoop({
      round: () => this.runOnce(),
      pollMs: () => deps.config.voicePollMs,
      log: deps.log,
      failure: 'the voice dialler failed a round',
    });
  }

  start(): void {
    this.#loop.start();
  }

  stop(): Promise<void> {
    return this.#loop.stop();
  }

  /** Something is due now (a call made, keys pressed): look at once. */
  wake(): void {
    this.#loop.wake();
  }

  /** One round: expired leases, due calls, due simulation steps. Answers how much it did. */
  async runOnce(): Promise<number> {
    const now = this.#d.now().getTime();
    if (now - this.#prunedAt > 30_000) {
      this.#prunedAt = now;
      await this.#d.db.transaction((tx) => pruneSlots(tx, this.#d.now()));
    }
    // One cheap look (each part on a partial index) before any transaction: an idle dialler costs a
    // statement a poll, which matters on the embedded database's single connection.
    if (!(await this.#anythingToDo())) return 0;
    const expired = await this.#expireLeases();
    // Campaigns make their due calls first, so that this round places them.
    const made = await this.#d.paceCampaigns();
    const taken = await this.#takeDue();
    await Promise.all(taken.map((call) => this.#place(call)));
    const stepped = await this.#stepSimulations();
    return expired + made + taken.length + stepped;
  }

  async #anythingToDo(): Promise<boolean> {
    const { rows } = await this.#d.db.query<{ due: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM calls WHERE status = 'queued' AND due_at <= $1)
           OR EXISTS (SELECT 1 FROM calls WHERE sim_due_at <= $1)
           OR EXISTS (SELECT 1 FROM voice_campaigns WHERE status IN ('scheduled', 'running')) AS due`,
      [this.#d.now()],
    );
    return rows[0]!.due;
  }

  async #expireLeases(): Promise<number> {
    const now = this.#d.now();
    return this.#d.db.transaction(async (tx) => {
      const { rows } = await tx.query<CallRow>(
        `SELECT * FROM calls WHERE status = 'queued' AND provider_call_id IS NULL AND lease_until < $1
          ORDER BY lease_until LIMIT ${BATCH} FOR UPDATE SKIP LOCKED`,
        [now],
      );
      for (const call of rows) {
        this.#d.log.warn(
          { callId: call.id },
          'a call placed without an answer from the provider is failed, not placed again',
        );
        await applyCallUpdate(tx, this.#d, call, {
          status: 'failed',
          at: now,
          error: {
            code: 'PROVIDER_UNKNOWN_OUTCOME',
            message: 'The provider did not say whether it placed the call; it is not placed again.',
            providerCode: null,
          },
        });
      }
      return rows.length;
    });
  }

  /** Takes the due calls that get a slot (and a hold), leased, in one transaction. */
  async #takeDue(): Promise<CallRow[]> {
    const now = this.#d.now();
    return this.#d.db.transaction(async (tx) => {
      // A paused (or canceled) campaign's calls wait: only a running campaign's are placed.
      const { rows } = await tx.query<CallRow & { plan_code: string; campaign_cps: number | null }>(
        `SELECT c.*, a.plan_code, v.calls_per_second AS campaign_cps
           FROM calls c JOIN accounts a ON a.id = c.account_id
           LEFT JOIN voice_campaigns v ON v.id = c.campaign_id
          WHERE c.status = 'queued' AND c.lease_until IS NULL AND c.due_at <= $1
            AND (c.campaign_id IS NULL OR v.status = 'running')
          ORDER BY c.due_at, c.id LIMIT ${BATCH} FOR UPDATE OF c SKIP LOCKED`,
        [now],
      );
      const taken: CallRow[] = [];
      // Seconds found full this round (a campaign's, an account's): not asked again until the next.
      const full = new Set<string>();
      const slot = async (key: string, perSecond: number) => {
        if (full.has(key)) return false;
        if ((await takeSlots(tx, key, now, 1, perSecond)) === 1) return true;
        full.add(key);
        return false;
      };
      for (const row of rows) {
        const { plan_code, campaign_cps, ...call } = row;
        // Queued when its contact was erased: there is nobody left to call.
        if (call.to_number === ERASED) {
          await applyCallUpdate(tx, this.#d, call, {
            status: 'failed',
            at: now,
            error: {
              code: 'CONTACT_ERASED',
              message: 'The contact was erased before the call was placed.',
              providerCode: null,
            },
          });
          continue;
        }
        if (call.campaign_id && campaign_cps === null) continue;
        // The campaign's pace first (its own second's count, keyed by its id), then the account's.
        if (call.campaign_id && !(await slot(`voice-campaign:${call.campaign_id}`, campaign_cps!))) continue;
        if (!(await slot(`voice:${call.account_id}`, planOf(plan_code).voiceCallsPerSecond))) continue;
        const held =
          Number(call.held_micros) > 0
            ? Number(call.held_micros)
            : await holdForCall(tx, this.#d.events, call);
        if (held === null) {
          await applyCallUpdate(tx, this.#d, call, {
            status: 'failed',
            at: now,
            error: {
              code: 'INSUFFICIENT_BALANCE',
              message: 'The wallet could not pay the call’s first minute.',
              providerCode: null,
            },
          });
          continue;
        }
        const lease = new Date(now.getTime() + this.#d.config.voiceLeaseMs);
        await updateCall(
          tx,
          call.id,
          { lease_until: lease, dial_attempts: call.dial_attempts + 1, held_micros: held },
          now,
        );
        taken.push({ ...call, lease_until: lease, dial_attempts: call.dial_attempts + 1, held_micros: held });
      }
      return taken;
    });
  }

  async #place(call: CallRow): Promise<void> {
    const urls = callUrls(this.#d.config.publicBaseUrl, call.account_id, call.id);
    let outcome: PlaceOutcome;
    try {
      const channel = await loadVoiceChannel(this.#d.db, call.account_id);
      outcome = await this.#d.channels.voice(call.provider, channel).place({
        callId: call.id,
        to: call.to_number,
        from: call.from_number,
        answerUrl: urls.answer,
        statusCallbackUrl: urls.status,
        machineDetection: call.machine_detection,
        ringTimeoutSeconds: call.ring_timeout_seconds,
        maxDurationSeconds: call.max_duration_seconds,
      });
    } catch (err) {
      // The account left Twilio since the call was made: nothing can place it.
      outcome = {
        kind: 'rejected',
        error: { code: 'CHANNEL_NOT_CONFIGURED', message: (err as Error).message, providerCode: null },
      };
    }
    const cancel = await this.#record(call, outcome);
    if (cancel) await hangUp(this.#services(), cancel, 'cancel');
  }

  #services() {
    return { ...this.#d, voice: this };
  }

  /** Records a placing's outcome; answers the call when it was asked to end meanwhile (to cancel now). */
  async #record(placed: CallRow, outcome: PlaceOutcome): Promise<CallRow | null> {
    const now = this.#d.now();
    return this.#d.db.transaction(async (tx: Tx) => {
      const call = (await findCall(tx, placed.account_id, placed.id, { forUpdate: true }))!;
      switch (outcome.kind) {
        case 'placed': {
          if (call.provider === 'sandbox') {
            await updateCall(
              tx,
              call.id,
              { sim: startSimulation(sandboxCallee(call.to_number)), sim_due_at: now },
              now,
            );
          }
          const { call: after } = await applyCallUpdate(
            tx,
            this.#d,
            { ...call, lease_until: null },
            {
              status: 'initiated',
              // Initiated when its slot was taken: the second the calls-per-second count holds it to.
              at: new Date(placed.lease_until!.getTime() - this.#d.config.voiceLeaseMs),
              providerCallId: outcome.providerCallId,
            },
          );
          if (call.status !== 'queued') await updateCall(tx, call.id, { lease_until: null }, now);
          return call.hangup_requested_at ? { ...after, provider_call_id: outcome.providerCallId } : null;
        }
        case 'rejected':
          await applyCallUpdate(tx, this.#d, call, { status: 'failed', at: now, error: outcome.error });
          return null;
        case 'retry': {
          if (call.dial_attempts >= MAX_DIALS || call.hangup_requested_at) {
            await applyCallUpdate(tx, this.#d, call, {
              status: call.hangup_requested_at ? 'canceled' : 'failed',
              at: now,
              ...(call.hangup_requested_at ? {} : { error: outcome.error }),
            });
            return null;
          }
          const waitMs = Math.max(
            (outcome.retryAfterSeconds ?? 0) * 1000,
            1000 * 2 ** (call.dial_attempts - 1),
          );
          await updateCall(tx, call.id, { lease_until: null, due_at: new Date(now.getTime() + waitMs) }, now);
          return null;
        }
        case 'in_doubt':
          // Left leased: a callback naming the call settles it, else the lease's end fails it.
          this.#d.log.warn({ callId: call.id, error: outcome.error.message }, 'a call was placed in doubt');
          return null;
      }
    });
  }

  /** Plays the sandbox simulation steps that are due; answers how many. */
  async #stepSimulations(): Promise<number> {
    const now = this.#d.now();
    const { rows } = await this.#d.db.query<CallRow>(
      `UPDATE calls SET sim_due_at = $2
        WHERE id IN (SELECT id FROM calls WHERE sim_due_at <= $1 ORDER BY sim_due_at LIMIT ${BATCH} FOR UPDATE SKIP LOCKED)
        RETURNING *`,
      [now, new Date(now.getTime() + this.#d.config.voiceLeaseMs)],
    );
    await Promise.all(rows.map((call) => this.#step(call)));
    return rows.length;
  }

  async #step(call: CallRow): Promise<void> {
    const { config } = this.#d;
    const urls = callUrls(config.publicBaseUrl, call.account_id, call.id);
    const token = sandboxVoiceToken(config.secretsKey, call.account_id);
    const post = async (url: string, params: FormParams) => {
      const answer = await this.#d.inject({
        method: 'POST',
        url: url.slice(config.publicBaseUrl.length),
        payload: new URLSearchParams(
          Object.entries(params).flatMap(([k, v]) =>
            Array.isArray(v) ? v.map((x) => [k, x]) : [[k, v]],
          ) as [string, string][],
        ).toString(),
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'x-twilio-signature': signTwilioRequest(token, url, params),
        },
      });
      if (answer.statusCode >= 300) {
        this.#d.log.warn(
          { callId: call.id, statusCode: answer.statusCode },
          'a sandbox voice callback was refused',
        );
      }
      return answer;
    };
    try {
      const step = await playStep(
        {
          providerCallId: call.provider_call_id ?? '',
          to: call.to_number,
          machineDetection: call.machine_detection,
          ringTimeoutSeconds: call.ring_timeout_seconds,
          answerUrl: urls.answer,
          statusCallbackUrl: urls.status,
        },
        call.sim as SimState,
        call.sim_keys,
        { post, now: this.#d.now, stepMs: config.voiceSandboxStepMs },
      );
      const next = this.#d.now();
      await this.#d.db.query(
        // Ended meanwhile (a cancel set the simulation's end): that end is played next, at once.
        // Erased meanwhile: it plays on without the script it fetched (erasure/erase.ts).
        `UPDATE calls
            SET sim = CASE WHEN ${ENDED_MEANWHILE} THEN sim
                           WHEN to_number = '${ERASED}' THEN $2::jsonb - 'twiml' ELSE $2::jsonb END,
                sim_due_at = CASE WHEN ${ENDED_MEANWHILE} THEN $5::timestamptz ELSE $3::timestamptz END,
                sim_keys = substr(sim_keys, $4 + 1), updated_at = $5
          WHERE id = $1`,
        [
          call.id,
          step.state ? JSON.stringify(step.state) : null,
          step.state ? new Date(next.getTime() + step.dueInMs) : null,
          step.consumed,
          next,
          (call.sim as SimState).phase,
        ],
      );
    } catch (err) {
      // Tried again when the lease ends; a repeated callback is ignored by the route.
      this.#d.log.error({ err, callId: call.id }, 'a sandbox call step failed');
    }
  }
}
