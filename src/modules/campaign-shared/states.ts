// The life of a campaign, message or voice (docs/messaging.md § Campaigns, docs/voice.md):
//   draft ──start──▶ running (or scheduled until startAt) ──▶ completed
//   scheduled/running ──pause──▶ paused ──resume──▶ running (or scheduled until startAt)
//   any but completed and canceled ──cancel──▶ canceled
// Only a draft is changed; a draft, completed or canceled campaign is deleted. A move from a
// wrong state is 409, with a message that says which states it takes.
import { conflict } from '../../kernel/http/errors.ts';

export const CAMPAIGN_STATUSES = [
  'draft',
  'scheduled',
  'running',
  'paused',
  'completed',
  'canceled',
] as const;
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];

export type CampaignAction = 'change' | 'delete' | 'estimate' | 'start' | 'pause' | 'resume' | 'cancel';

const FROM: Record<CampaignAction, readonly CampaignStatus[]> = {
  change: ['draft'],
  delete: ['draft', 'completed', 'canceled'],
  estimate: ['draft'],
  start: ['draft'],
  pause: ['scheduled', 'running'],
  resume: ['paused'],
  cancel: ['draft', 'scheduled', 'running', 'paused'],
};

const REFUSAL: Record<CampaignAction, (status: CampaignStatus) => string> = {
  change: (s) => `A ${s} campaign cannot be changed; only a draft can.`,
  delete: (s) => `A ${s} campaign cannot be deleted; cancel it first.`,
  estimate: (s) => `A ${s} campaign has its estimate (cost.estimated); only a draft is estimated.`,
  start: (s) => `A ${s} campaign cannot be started; only a draft can.`,
  pause: (s) => `A ${s} campaign cannot be paused; only a scheduled or running one can.`,
  resume: (s) => `A ${s} campaign cannot be resumed; only a paused one can.`,
  cancel: (s) => `The campaign is ${s} already.`,
};

/** Whether `action` may be taken from `status`. */
export function allows(status: CampaignStatus, action: CampaignAction): boolean {
  return FROM[action].includes(status);
}

/** Throws the 409 of an action taken from a wrong state. */
export function assertAllowed(status: CampaignStatus, action: CampaignAction): void {
  if (!allows(status, action)) throw conflict(REFUSAL[action](status));
}

/** Where a start or a resume leads: scheduled while startAt is ahead, else running. */
export function goingStatus(startAt: Date | null, now: Date): 'scheduled' | 'running' {
  return startAt !== null && startAt > now ? 'scheduled' : 'running';
}
