// The journey action of rules and journeys (trigger_journey): automation runs it through this
// handler (automation/run-actions.ts, OwnedActions), given in app.ts.

import { dataBudget, failed, type OwnedActions, ok, renderWhole } from '../automation/index.ts';
import { findJourney } from './repo.ts';
import { tryStart } from './start.ts';

export const journeyActions: OwnedActions = {
  async trigger_journey({ action, tx, services, contact, account, actor, scope, causedBy }) {
    const journey = await findJourney(tx, account.id, action.journeyId as string);
    if (!journey) return failed('RESOURCE_NOT_FOUND', 'The journey was deleted.');
    const data = action.data
      ? await renderWhole(action.data as Record<string, unknown>, scope, dataBudget())
      : {};
    const started = await tryStart(tx, services, journey, contact.id, {
      sandbox: actor.mode === 'sandbox',
      triggerData: data,
      triggerEventId: scope.event.id,
      depth: causedBy.depth + 1,
    });
    if ('error' in started) return failed(started.error.code, started.error.message);
    services.runsDue?.();
    return ok(started.run.id);
  },
};
