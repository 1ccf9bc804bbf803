// The contract between Tidings and a voice provider, beside the messaging one (types.ts):
// - VoiceAdapter, made for one account's voice channel with its credentials: places a call and
//   hangs one up. It never throws for a provider's failure: each becomes a ProviderError with a
//   Tidings code, and the outcome says whether the call may be tried again.
// - Callbacks of both voice providers are Twilio-shaped (the sandbox simulator posts what Twilio
//   would), so one reader checks and parses them: `twilio-voice/callbacks.ts`.
// The rest of Tidings never sees a provider's own shapes.
import type { ProviderError } from './types.ts';

export type VoiceProvider = 'sandbox' | 'twilio';

export const VOICE_PROVIDERS: readonly VoiceProvider[] = ['sandbox', 'twilio'];

/** What placing a call needs; the URLs are where the provider asks for TwiML and reports progress. */
export interface PlaceCallRequest {
  /** Tidings' id (call_…), echoed in the URLs so that a callback finds the call before its sid is known. */
  callId: string;
  /** E.164, with the leading +. */
  to: string;
  /** The caller id (the channel's number); the sandbox has none. */
  from: string | null;
  /** Where the provider fetches the call's first TwiML when it is answered (POST). */
  answerUrl: string;
  /** Where the provider posts the four progress events: initiated, ringing, answered, completed (POST). */
  statusCallbackUrl: string;
  /** Ask the provider to say who answered: a person or a machine (`AnsweredBy`). */
  machineDetection: boolean;
  /** How long to let it ring before giving up (no answer). */
  ringTimeoutSeconds: number;
  /** The call is cut after this long connected. */
  maxDurationSeconds: number;
}

export type PlaceOutcome =
  /** The provider took the call; its id (Twilio's CallSid) names it in callbacks. */
  | { kind: 'placed'; providerCallId: string }
  /** Refused for good (invalid or blocked number, credentials): the call fails now. */
  | { kind: 'rejected'; error: ProviderError }
  /** A passing failure (throttled, 5xx, unreachable before sending): place it again later. */
  | { kind: 'retry'; error: ProviderError; retryAfterSeconds?: number }
  /**
   * The request went out and no usable answer came back: the provider may be ringing the person.
   * It is never placed again (a second call to a person is worse than a lost one); a callback naming
   * the call settles it, else it fails with PROVIDER_UNKNOWN_OUTCOME.
   */
  | { kind: 'in_doubt'; error: ProviderError };

/** How a call is ended: `cancel` before it is answered, `complete` (hang up) once it is. */
export type HangUpHow = 'cancel' | 'complete';

export type HangUpOutcome =
  | { kind: 'done' }
  /** The provider no longer has it in progress (it ended on its own meanwhile): nothing to do. */
  | { kind: 'gone' }
  | { kind: 'failed'; error: ProviderError };

export interface VoiceAdapter {
  readonly provider: VoiceProvider;
  place(request: PlaceCallRequest): Promise<PlaceOutcome>;
  hangUp(call: { callId: string; providerCallId: string }, how: HangUpHow): Promise<HangUpOutcome>;
}

/** One of Twilio's request parameters, as a form field (a repeated field is an array). */
export type FormParams = Record<string, string | string[]>;

/** Who answered a call, as the provider's machine detection says. */
export type AnsweredBy = 'human' | 'machine' | 'unknown';

/** A provider's status callback about a call, read. */
export interface VoiceStatusReport {
  /** The provider's id of the call (Twilio's CallSid). */
  callSid: string;
  status: TwilioCallStatus;
  /** The provider's order of its events (Twilio's SequenceNumber): they may arrive out of it, or twice. */
  sequenceNumber: number | null;
  durationSeconds: number | null;
  answeredBy: AnsweredBy | null;
  at: Date;
  errorCode: string | null;
  sipResponseCode: number | null;
}

/**
 * The callback half of the voice providers, as `CallbackAdapter` is messaging's: no credentials
 * (the caller knows which token the call's provider signs with).
 */
export interface VoiceCallbackReader {
  /** The header that carries the signature (lower case). */
  readonly signatureHeader: string;
  /** Whether the provider signed a POST of `params` to `url` with `token`. */
  verify(token: string, signature: string | undefined, url: string, params: FormParams): boolean;
  /** A status callback's report, or null when the form is not one. */
  parseStatus(params: FormParams, now: Date): VoiceStatusReport | null;
  /** Who answered, from a request's AnsweredBy. */
  answeredBy(params: FormParams): AnsweredBy | null;
}

/** Twilio's CallStatus values, as its callbacks and REST answers spell them. */
export type TwilioCallStatus =
  | 'queued'
  | 'initiated'
  | 'ringing'
  | 'in-progress'
  | 'completed'
  | 'busy'
  | 'no-answer'
  | 'failed'
  | 'canceled';

/** An account's voice channel as stored (modules/voice-channel): no row is the sandbox. */
export interface VoiceChannel {
  provider: VoiceProvider;
  /** Twilio's account (AC…), with the number calls come from; null on the sandbox. */
  twilio: { accountSid: string; from: string } | null;
  /** The Twilio auth token, sealed with SECRETS_KEY (never shown). */
  authTokenSealed: string | null;
  /** null: never configured (the sandbox by default). */
  updatedAt: Date | null;
}

export const SANDBOX_VOICE: VoiceChannel = Object.freeze({
  provider: 'sandbox',
  twilio: null,
  authTokenSealed: null,
  updatedAt: null,
});
