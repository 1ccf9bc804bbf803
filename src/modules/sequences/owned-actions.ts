// The sequence actions of rules and journeys (enroll_in_sequence, exit_sequences): automation runs
// them through this handler (automation/run-actions.ts, OwnedActions), given in app.ts.
import { failed, type OwnedActions, ok } from '../automation/index.ts';
import { exitEnrollments, tryEnroll } from './enroll.ts';
import { findSequence } from './repo.ts';

export const sequenceActions: OwnedActions = {
  async enroll_in_sequence({ action, tx, services, contact, account, actor, scope }) {
    const sequence = await findSequence(tx, account.id, action.sequenceId as string);
    if (!sequence) return failed('RESOURCE_NOT_FOUND', 'The sequence was deleted.');
    const enrolled = await tryEnroll(tx, services, sequence, contact.id, {
      sandbox: actor.mode === 'sandbox',
      triggerEventId: scope.event.id,
    });
    if ('error' in enrolled) return failed(enrolled.error.code, enrolled.error.message);
    return ok(enrolled.enrollment.id);
  },

  async exit_sequences({ action, tx, services, contact, account }) {
    await exitEnrollments(tx, services, account.id, contact.id, () => 'manual', {
      sequenceId: action.sequenceId as string | undefined,
    });
    return ok(contact.id);
  },
};
