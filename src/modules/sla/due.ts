// SLA policies, pure: which policy a conversation falls under, when its targets fall due, and how a
// conversation stands against them. The rules:
//
// - Policies are looked at lowest `position` first (then oldest); the first whose conditions hold
//   applies: any of its `labels` on the conversation (none listed: any), and its team among
//   `teamIds` (none listed: any team or none). No policy holding: no due times.
// - The clock starts when the conversation opens or is reopened. First response: the business's
//   first reply since then (not the inbox's automatic messages); resolution: the close.
// - A target's due time is its minutes after the start, around the clock, or with `businessHours`
//   counted only while the account is open (automation's addOpenMinutes); an account without
//   business hours is open around the clock. Hours that never hold that much open time: no due time.
// - A target is met when it happened by its due time: the first reply by then, or the conversation
//   closed by then (closed without a reply in time, the first response target asks nothing more).
//   It is missed when its due time passes unmet: once, recorded with the time it was found.
import { addOpenMinutes, type BusinessHours } from '../automation/index.ts';
import type { ConversationRow } from '../conversations/index.ts';

export type SlaTarget = 'first_response' | 'resolution';

export interface SlaRule {
  id: string;
  first_response_minutes: number | null;
  resolution_minutes: number | null;
  business_hours: boolean;
  labels: string[];
  team_ids: string[];
}

export type SlaConversation = Pick<
  ConversationRow,
  | 'labels'
  | 'team_id'
  | 'status'
  | 'closed_at'
  | 'first_response_at'
  | 'sla_first_response_due_at'
  | 'sla_resolution_due_at'
  | 'sla_first_response_breached_at'
  | 'sla_resolution_breached_at'
>;

/** The policy that applies: the first (in the order given) whose conditions hold. */
export function policyFor<P extends SlaRule>(
  policies: P[],
  c: Pick<SlaConversation, 'labels' | 'team_id'>,
): P | null {
  return (
    policies.find(
      (p) =>
        (p.labels.length === 0 || p.labels.some((l) => c.labels.includes(l))) &&
        (p.team_ids.length === 0 || (c.team_id !== null && p.team_ids.includes(c.team_id))),
    ) ?? null
  );
}

/** A target's due time from the clock's start. */
export function dueAt(minutes: number | null, startedAt: Date, hours: BusinessHours | null): Date | null {
  if (minutes === null) return null;
  if (!hours) return new Date(startedAt.getTime() + minutes * 60_000);
  return addOpenMinutes(hours, startedAt, minutes);
}

interface TargetState {
  target: SlaTarget;
  due: Date | null;
  breachedAt: Date | null;
  /** When it was met (the reply, the close); null: not yet. */
  metAt: Date | null;
}

function targetsOf(c: SlaConversation): TargetState[] {
  const closedAt = c.status === 'closed' ? c.closed_at : null;
  return [
    {
      target: 'first_response',
      due: c.sla_first_response_due_at,
      breachedAt: c.sla_first_response_breached_at,
      // Closed without a reply: nothing more is asked of it.
      metAt: c.first_response_at ?? closedAt,
    },
    {
      target: 'resolution',
      due: c.sla_resolution_due_at,
      breachedAt: c.sla_resolution_breached_at,
      metAt: closedAt,
    },
  ];
}

const unsettled = (t: TargetState): t is TargetState & { due: Date } =>
  t.due !== null && t.breachedAt === null && !(t.metAt !== null && t.metAt <= t.due);

/** The soonest due time still to judge (a past one too: the scan judges it at once), or null. */
export function nextDueAt(c: SlaConversation): Date | null {
  const dues = targetsOf(c)
    .filter(unsettled)
    .map((t) => t.due.getTime());
  return dues.length === 0 ? null : new Date(Math.min(...dues));
}

/** How a conversation stands at `now`: the targets missed now, and the next due time after it. */
export function judge(c: SlaConversation, now: Date): { missed: SlaTarget[]; nextDueAt: Date | null } {
  const open = targetsOf(c).filter(unsettled);
  const missed = open.filter((t) => t.due <= now).map((t) => t.target);
  const later = open.filter((t) => t.due > now).map((t) => t.due.getTime());
  return { missed, nextDueAt: later.length === 0 ? null : new Date(Math.min(...later)) };
}
