// The sandbox's template review, run by a job worker after the account's `sandbox.reviewAfterMs`,
// as Meta's decision arrives some time after a submission. The decision (channels/sandbox/review.ts)
// is applied through applyTemplateStatus, exactly as a WhatsApp callback's would be, and only to
// the submission it was scheduled for: if the template was edited or submitted again meanwhile
// (no longer PENDING with that provider id), the review is moot and changes nothing.
import { reviewTemplate } from '../../channels/sandbox/review.ts';
import type { Database } from '../../kernel/database/db.ts';
import type { JobDefinition } from '../../kernel/jobs/jobs.ts';
import type { EventOutbox } from '../../kernel/outbox/events.ts';
import type { ApprovedTemplates } from './approved.ts';
import { lockTemplateById, toDefinition } from './repo.ts';
import { applyTemplateStatus, TEMPLATE_REVIEW_JOB, type TemplateReviewJobData } from './service.ts';

export interface TemplateReviewDeps {
  db: Database;
  events: EventOutbox;
  now: () => Date;
  approvedTemplates: ApprovedTemplates;
}

/** Reviews one sandbox submission; answers whether it changed the template. Safe to run twice. */
export async function reviewSubmission(
  deps: TemplateReviewDeps,
  data: TemplateReviewJobData,
): Promise<boolean> {
  return deps.db.transaction(async (tx) => {
    const row = await lockTemplateById(tx, data.templateId);
    if (!row) return false;
    if (
      row.status !== 'PENDING' ||
      row.provider !== 'sandbox' ||
      row.provider_template_id !== data.providerTemplateId
    ) {
      return false;
    }
    const decision = reviewTemplate(toDefinition(row));
    return applyTemplateStatus(deps, tx, row.account_id, {
      kind: 'template_status',
      providerTemplateId: data.providerTemplateId,
      name: row.name,
      language: row.language,
      event: decision.status,
      reason: decision.status === 'REJECTED' ? decision.reason : null,
    });
  });
}

export function templateReviewJob(deps: TemplateReviewDeps): JobDefinition<TemplateReviewJobData> {
  return {
    name: TEMPLATE_REVIEW_JOB,
    retryLimit: 5,
    retryDelaySeconds: 2,
    expireInSeconds: 60,
    handle: async (data) => {
      await reviewSubmission(deps, data);
    },
  };
}
