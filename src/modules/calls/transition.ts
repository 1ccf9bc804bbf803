// One call's next state, given one report about it (a provider's callback, the dialer, a cancel):
// a pure function, so the rules are stated and tested apart from the SQL that applies them.
//
// - Statuses move forward: queued → initiated → ringing → in_progress → an end. Callbacks are not
//   ordered (Twilio's progress events may arrive late or twice): one that would move a call back
//   (ringing after in_progress) changes nothing, and one that skips ahead (in_progress with no
//   ringing) fills in the times it skipped.
// - The ends are completed, busy, no_answer, failed and canceled. An ended call never moves again:
//   a later report is ignored, whatever it says (the first end is what happened).
// - The time of each status is the first report of it; the duration is the provider's, given with
//   the end (else the time from the answer to the end).
import type { TwilioCallStatus } from '../../channels/voice.ts';

/** A call's status, as the API shows it. */
export type CallStatus =
  | 'queued'
  | 'initiated'
  | 'ringing'
  | 'in_progress'
  | 'completed'
  | 'busy'
  | 'no_answer'
  | 'failed'
  | 'canceled';

export const ENDED: readonly CallStatus[] = ['completed', 'busy', 'no_answer', 'failed', 'canceled'];

const RANK: Record<CallStatus, number> = {
  queued: 0,
  initiated: 1,
  ringing: 2,
  in_progress: 3,
  completed: 4,
  busy: 4,
  no_answer: 4,
  failed: 4,
  canceled: 4,
};

/** A Twilio CallStatus as ours. */
export function fromTwilio(status: TwilioCallStatus): CallStatus {
  switch (status) {
    case 'queued':
    case 'initiated':
      return 'initiated';
    case 'in-progress':
      return 'in_progress';
    case 'no-answer':
      return 'no_answer';
    default:
      return status;
  }
}

export interface CallState {
  status: CallStatus;
  initiated_at: Date | null;
  ringing_at: Date | null;
  answered_at: Date | null;
  ended_at: Date | null;
  duration_seconds: number | null;
}

export interface CallReport {
  status: CallStatus;
  at: Date;
  /** With an end: how long the call was connected, in seconds (the provider's CallDuration). */
  durationSeconds?: number;
}

/** The call once the report is applied, and whether its status moved (an event is due). */
export function nextCallState<T extends CallState>(call: T, report: CallReport): { call: T; moved: boolean } {
  if (ENDED.includes(call.status)) return { call, moved: false };
  if (RANK[report.status] <= RANK[call.status]) return { call, moved: false };
  const next: T = { ...call, status: report.status };
  const at = report.at;
  // Times of the statuses the report reached, the skipped ones included (first report wins).
  // A call canceled or failed before it was dialled never was.
  if (report.status !== 'canceled' && report.status !== 'failed') next.initiated_at ??= at;
  if (report.status === 'ringing' || report.status === 'in_progress' || report.status === 'completed') {
    next.ringing_at ??= at;
  }
  if (report.status === 'in_progress' || report.status === 'completed') next.answered_at ??= at;
  if (RANK[report.status] === RANK.completed) {
    next.ended_at = at;
    next.duration_seconds =
      report.durationSeconds ??
      (next.answered_at ? Math.max(0, Math.round((at.getTime() - next.answered_at.getTime()) / 1000)) : 0);
  }
  return { call: next, moved: true };
}

/** Each started minute of a connected call is billed: 61 s are two minutes, 0 s none. */
export function billableMinutes(durationSeconds: number): number {
  return Math.ceil(Math.max(0, durationSeconds) / 60);
}
