// The sandbox's side of a call, played step by step as Twilio would: the four progress events
// (initiated, ringing, answered, completed) posted to the call's status callback, the answer URL
// fetched for TwiML, gathers waited on and their digits posted to the gather's action, redirects
// followed. What the person at the number does comes from the contract's magic numbers
// (voice.ts); keys sent with POST /sandbox/calls/{id}/digits are pressed at the next gather (as a
// real caller may type ahead while a prompt is said).
// A step is pure but for its posts: it takes the state and the keys waiting, and answers the next
// state, when it is due, and how many keys it used. The dialler (modules/calls/dialer.ts) keeps the
// state in the call's row, so a restart goes on where the simulation was; every post goes through
// the real, signed callback route, so its checks run on every sandbox call.
import type { FormParams, TwilioCallStatus } from '../voice.ts';
import type { SandboxCallee } from './voice.ts';

export interface SimState {
  callee: SandboxCallee;
  phase: 'initiate' | 'ring' | 'answer' | 'play' | 'gather' | 'end';
  /** The next status callback's SequenceNumber. */
  seq: number;
  /** The TwiML being played (phase play). */
  twiml?: string;
  /** The gather waited on (phase gather). */
  gather?: { action: string; numDigits: number };
  /** How the call ends (phase end). */
  end?: TwilioCallStatus;
  answeredAt?: string;
  /** Gathers answered so far (the presses_1 callee presses 1 at the first). */
  gathers: number;
}

export interface SimCall {
  providerCallId: string;
  to: string;
  machineDetection: boolean;
  ringTimeoutSeconds: number;
  answerUrl: string;
  statusCallbackUrl: string;
}

export interface SimIO {
  /** Posts a form, signed as Twilio signs it, to one of the callback routes. */
  post(url: string, params: FormParams): Promise<{ statusCode: number; body: string }>;
  now(): Date;
  /** The pace: the time one step takes; a gather's timeout in seconds is scaled by stepMs/1000. */
  stepMs: number;
}

export interface SimStep {
  /** null: the simulation is over. */
  state: SimState | null;
  /** When the next step is due, from now. */
  dueInMs: number;
  /** Keys pressed at this step (taken from the waiting ones). */
  consumed: number;
}

export function startSimulation(callee: SandboxCallee): SimState {
  return { callee, phase: 'initiate', seq: 0, gathers: 0 };
}

/** The simulation told to end now (a cancel, or a hang-up from the API). */
export function endSimulation(state: SimState, how: 'canceled' | 'completed'): SimState {
  return { ...state, phase: 'end', end: how, twiml: undefined, gather: undefined };
}

const unescapeXml = (s: string) =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

function attribute(tag: string, name: string): string | null {
  const m = new RegExp(`\\b${name}="([^"]*)"`).exec(tag);
  return m ? unescapeXml(m[1]!) : null;
}

/** What a TwiML document makes the call do next (only the verbs Tidings' scripts use). */
function readTwiml(
  twiml: string,
):
  | { verb: 'gather'; action: string; numDigits: number; timeoutSeconds: number }
  | { verb: 'redirect'; url: string }
  | { verb: 'dial' }
  | { verb: 'hangup' } {
  const gather = /<Gather\b[^>]*>/.exec(twiml)?.[0];
  if (gather) {
    return {
      verb: 'gather',
      action: attribute(gather, 'action') ?? '',
      numDigits: Number(attribute(gather, 'numDigits') ?? 1),
      timeoutSeconds: Number(attribute(gather, 'timeout') ?? 5),
    };
  }
  const redirect = /<Redirect\b[^>]*>([^<]*)<\/Redirect>/.exec(twiml);
  if (redirect) return { verb: 'redirect', url: unescapeXml(redirect[1]!.trim()) };
  if (/<Dial\b/.test(twiml)) return { verb: 'dial' };
  return { verb: 'hangup' };
}

function answeredBy(state: SimState): string {
  return state.callee === 'machine' ? 'machine_start' : 'human';
}

/** The fields Twilio sends with every request about a call. */
function base(call: SimCall, state: SimState, status: TwilioCallStatus): FormParams {
  return {
    AccountSid: 'ACsandbox',
    ApiVersion: '2010-04-01',
    CallSid: call.providerCallId,
    CallStatus: status,
    Direction: 'outbound-api',
    From: '+15005550000',
    To: call.to,
    ...(call.machineDetection && state.answeredAt ? { AnsweredBy: answeredBy(state) } : {}),
  };
}

async function status(call: SimCall, state: SimState, io: SimIO, value: TwilioCallStatus): Promise<SimState> {
  const params: FormParams = {
    ...base(call, state, value),
    CallbackSource: 'call-progress-events',
    SequenceNumber: String(state.seq),
    Timestamp: io.now().toUTCString(),
  };
  if (['completed', 'busy', 'no-answer', 'failed', 'canceled'].includes(value)) {
    const connected = state.answeredAt
      ? Math.round((io.now().getTime() - Date.parse(state.answeredAt)) / 1000)
      : 0;
    params.CallDuration = String(connected);
    params.Duration = String(Math.ceil(connected / 60));
  }
  await io.post(call.statusCallbackUrl, params);
  return { ...state, seq: state.seq + 1 };
}

/** Fetches TwiML as Twilio does (the answer URL, a gather's action, a redirect): the next document. */
async function fetchTwiml(
  call: SimCall,
  state: SimState,
  io: SimIO,
  url: string,
  extra: FormParams = {},
): Promise<string | null> {
  const answer = await io.post(url, { ...base(call, state, 'in-progress'), ...extra });
  // Twilio says "an application error has occurred" and hangs up when the TwiML cannot be had.
  return answer.statusCode >= 200 && answer.statusCode < 300 ? answer.body : null;
}

function ended(state: SimState, how: TwilioCallStatus, dueInMs: number, consumed = 0): SimStep {
  return {
    state: { ...state, phase: 'end', end: how, twiml: undefined, gather: undefined },
    dueInMs,
    consumed,
  };
}

function playing(state: SimState, twiml: string | null, io: SimIO, consumed: number): SimStep {
  if (twiml === null) return ended(state, 'completed', 0, consumed);
  return { state: { ...state, phase: 'play', twiml, gather: undefined }, dueInMs: io.stepMs, consumed };
}

/** Plays the simulation's next step. `keys`: digits sent with the sandbox's digits route, not yet pressed. */
export async function playStep(call: SimCall, state: SimState, keys: string, io: SimIO): Promise<SimStep> {
  switch (state.phase) {
    case 'initiate': {
      const next = await status(call, state, io, 'initiated');
      if (state.callee === 'fails') return ended(next, 'failed', io.stepMs);
      return { state: { ...next, phase: 'ring' }, dueInMs: io.stepMs, consumed: 0 };
    }
    case 'ring': {
      const next = await status(call, state, io, 'ringing');
      if (state.callee === 'busy') return ended(next, 'busy', io.stepMs);
      if (state.callee === 'no_answer') return ended(next, 'no-answer', call.ringTimeoutSeconds * io.stepMs);
      return { state: { ...next, phase: 'answer' }, dueInMs: io.stepMs, consumed: 0 };
    }
    case 'answer': {
      const answered = { ...state, answeredAt: io.now().toISOString() };
      const next = await status(call, answered, io, 'in-progress');
      return playing(next, await fetchTwiml(call, next, io, call.answerUrl), io, 0);
    }
    case 'play': {
      const doc = readTwiml(state.twiml ?? '');
      if (doc.verb === 'gather') {
        const pressed = keys || (state.callee === 'presses_1' && state.gathers === 0 ? '1' : '');
        const gather = { action: doc.action, numDigits: doc.numDigits };
        if (!pressed) {
          return {
            state: { ...state, phase: 'gather', gather },
            dueInMs: doc.timeoutSeconds * io.stepMs,
            consumed: 0,
          };
        }
        return answerGather(
          call,
          { ...state, gather },
          pressed,
          keys ? Math.min(keys.length, doc.numDigits) : 0,
          io,
        );
      }
      if (doc.verb === 'redirect') return playing(state, await fetchTwiml(call, state, io, doc.url), io, 0);
      // A transfer is connected and talks for a step; a hang-up (or the end of the document) ends it.
      return ended(state, 'completed', doc.verb === 'dial' ? io.stepMs : 0);
    }
    case 'gather':
      return answerGather(call, state, keys, Math.min(keys.length, state.gather?.numDigits ?? 1), io);
    case 'end':
      await status(call, state, io, state.end ?? 'completed');
      return { state: null, dueInMs: 0, consumed: 0 };
  }
}

/** Posts a gather's result (empty: nothing pressed before its timeout), and plays what comes back. */
async function answerGather(call: SimCall, state: SimState, pressed: string, consumed: number, io: SimIO) {
  const gather = state.gather!;
  const digits = pressed.slice(0, gather.numDigits);
  const twiml = await fetchTwiml(call, state, io, gather.action, { Digits: digits, FinishedOnKey: '' });
  return playing({ ...state, gathers: state.gathers + 1 }, twiml, io, consumed);
}
