// The call action of rules (place_call): automation runs it through this handler
// (automation/run-actions.ts, OwnedActions), given in app.ts.
import { ApiError } from '../../kernel/http/errors.ts';
import { failed, type OwnedActions, ok } from '../automation/index.ts';
import { findContact } from '../contacts/index.ts';
import { NO_PHONE, placeCallIn } from './service.ts';

export const callActions: OwnedActions = {
  async place_call({ action, tx, services, contact, account, actor, causedBy }) {
    const row = await findContact(tx, account.id, contact.id);
    if (!row) return failed('RESOURCE_NOT_FOUND', 'The contact was deleted.');
    if (!row.phone) return { status: 'skipped', error: { ...NO_PHONE } };
    try {
      const placed = await placeCallIn(
        tx,
        services,
        account.id,
        { ...row, phone: row.phone },
        { scriptId: action.scriptId as string },
        { sandbox: actor.mode === 'sandbox', causedBy },
      );
      return ok(placed.id);
    } catch (err) {
      if (err instanceof ApiError) return failed(err.code, err.message);
      throw err;
    }
  },
};
