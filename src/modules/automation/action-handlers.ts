// What each action does, inside the run's transaction (run-actions.ts runs them in order, each in a
// savepoint). The contacts, conversations and messages modules do the work, given the run's
// transaction as their database and an outbox that marks their events with the run as the cause.
// The actions that reach modules above automation (a sequence's enrollment, a journey's start, a
// call) are theirs: each registers its handler in app.ts (`OwnedActions`, run-actions.ts).

import type { CausedBy } from '../../kernel/outbox/events.ts';
import type { ContactFields } from '../contacts/index.ts';
import { addTags, recipientOf, removeTag, updateContact } from '../contacts/index.ts';
import { addLabels, assignConversation, closeConversation, removeLabel } from '../conversations/index.ts';
import type { MessageFieldsInput } from '../messages/index.ts';
import { acceptBatch, prepareMessage, type SendResult, templateLookup } from '../messages/index.ts';
import { type Action, CONTACT_CHANGE_FIELDS } from './action-checks.ts';
import { attributeBudget, bodyBudget, renderMessage, renderWhole } from './render-fields.ts';
import {
  type Act,
  automatedSendsLastHour,
  type EffectServices,
  failed,
  joinTransaction,
  markCausedBy,
  type OwnedActionType,
  ok,
} from './run-actions.ts';
import { render } from './templating.ts';
import { queueCall } from './webhook-calls.ts';

/** The team member with the fewest open conversations (then the first added): round robin. */
async function leastBusyMember(tx: Parameters<Act>[1]['tx'], accountId: string): Promise<string | null> {
  const { rows } = await tx.query<{ id: string }>(
    `SELECT m.id FROM team_members m
      WHERE m.account_id = $1
      ORDER BY (SELECT count(*) FROM conversations c
                 WHERE c.account_id = $1 AND c.assignee_id = m.id AND c.status = 'open'), m.id
      LIMIT 1`,
    [accountId],
  );
  return rows[0]?.id ?? null;
}

/**
 * The actions of this release. `sent` collects the sends accepted, for the dispatchers to be woken
 * once the run's transaction has committed.
 */
export function actor(s: EffectServices, sent: SendResult[]): Act {
  return async (action: Action, { tx, scope, actor, causedBy, key }) => {
    const services = {
      ...s,
      db: joinTransaction(tx, s.db),
      events: s.events.withCause(causedBy as CausedBy),
    };
    const contact = scope.contact;
    const account = { id: actor.accountId, countryCode: actor.countryCode };
    const conversation = scope.conversation;
    switch (action.type) {
      case 'add_tag':
      case 'remove_tag':
      case 'set_attribute':
        if (!contact)
          return failed('RESOURCE_NOT_FOUND', 'The event is about no contact (or it was deleted).');
        if (action.type === 'add_tag')
          await addTags(services, account.id, contact.id, [action.tag as string]);
        else if (action.type === 'remove_tag')
          await removeTag(services, account.id, contact.id, action.tag as string);
        else {
          const value =
            typeof action.value === 'string'
              ? await render(action.value, scope, attributeBudget(`attributes.${action.key as string}`))
              : action.value;
          await updateContact(services, account, contact.id, {
            attributes: { [action.key as string]: value as string | number | boolean | null },
          });
        }
        return ok(contact.id);
      case 'update_contact': {
        if (!contact)
          return failed('RESOURCE_NOT_FOUND', 'The event is about no contact (or it was deleted).');
        // Through the contacts service, as PATCH /contacts: its checks (the rendered name and email
        // too), its contact.updated event with `previous`, and what that event sets off (an
        // opt-out ends the contact's sequence enrollments).
        const change: ContactFields = {};
        for (const key of CONTACT_CHANGE_FIELDS) {
          const value = action[key];
          if (value === undefined) continue;
          if (key === 'optedIn' || key === 'marketingOptOut') change[key] = value as boolean;
          else change[key] = typeof value === 'string' ? await render(value, scope) : null;
        }
        await updateContact(services, account, contact.id, change);
        return ok(contact.id);
      }
      case 'assign_team':
        if (conversation?.status !== 'open') {
          return failed('CONFLICT', 'The contact has no open conversation to route.');
        }
        // The team is checked when the rule is saved; one deleted since fails the action (404).
        await assignConversation(
          services,
          account.id,
          conversation.id,
          { teamId: action.teamId as string },
          'rule',
        );
        return ok(conversation.id);
      case 'add_label':
      case 'remove_label': {
        if (conversation?.status !== 'open') {
          return failed('CONFLICT', 'The contact has no open conversation to label.');
        }
        if (action.type === 'add_label')
          await addLabels(services, account.id, conversation.id, [action.label as string]);
        else await removeLabel(services, account.id, conversation.id, action.label as string);
        return ok(conversation.id);
      }
      case 'close_conversation':
        // Nothing open: nothing to close.
        if (conversation?.status !== 'open') return ok();
        await closeConversation(services, account.id, conversation.id);
        return ok(conversation.id);
      case 'assign': {
        if (conversation?.status !== 'open') {
          return failed('CONFLICT', 'The contact has no open conversation to assign.');
        }
        const assigneeId =
          (action.assigneeId as string | undefined) ?? (await leastBusyMember(tx, account.id));
        if (!assigneeId) return failed('RESOURCE_NOT_FOUND', 'The account has no team member to assign.');
        await assignConversation(services, account.id, conversation.id, { assigneeId }, 'rule');
        return ok(conversation.id);
      }
      case 'send_message': {
        if (!contact)
          return failed('RESOURCE_NOT_FOUND', 'The event is about no contact (or it was deleted).');
        const recent = await automatedSendsLastHour(tx, [contact.id], s.now());
        if ((recent.get(contact.id) ?? 0) >= s.contactCapPerHour) {
          return {
            status: 'suppressed',
            error: {
              code: 'CONTACT_CAP',
              message: `The contact got ${s.contactCapPerHour} messages from automation in the last hour.`,
            },
          };
        }
        const message = await renderMessage(action.message as MessageFieldsInput, scope);
        const prepared = await prepareMessage(
          { ...message, ...recipientOf(contact) },
          { countryCode: actor.countryCode, lookup: templateLookup(tx, account.id, s.approvedTemplates) },
        );
        const [result] = await acceptBatch(services, tx, [
          {
            sender: {
              account: { id: account.id, channelProvider: actor.channelProvider },
              mode: actor.mode,
              // At most one message per run and action, whatever happens.
              idempotencyKey: key,
            },
            message: prepared,
          },
        ]);
        if (result!.kind === 'refused') return failed(result!.error.code, result!.error.message);
        if (result!.kind === 'existing') return ok();
        sent.push(result!);
        await markCausedBy(tx, [{ id: result!.message.id, caused_by: causedBy }]);
        return ok(result!.message.id);
      }
      case 'call_webhook': {
        const body = action.body
          ? await renderWhole(action.body as Record<string, unknown>, scope, bodyBudget())
          : {};
        const id = await queueCall(
          tx,
          {
            accountId: account.id,
            ruleId: causedBy.id,
            runId: causedBy.runId,
            url: action.url as string,
            // The run and the event are added to the body (they win over keys of the same name).
            payload: { ...body, run: { id: causedBy.runId, ruleId: causedBy.id }, event: scope.event },
          },
          s.now(),
        );
        return ok(id);
      }
      default: {
        // The actions of modules above automation, registered by them in app.ts (OwnedActions).
        const owned = s.actions[action.type as OwnedActionType];
        // Refused when the rule was saved (action-checks.ts): never reached by a saved rule.
        if (!owned) return failed('INVALID_REQUEST', `${action.type} is not available in this release.`);
        if (!contact)
          return failed('RESOURCE_NOT_FOUND', 'The event is about no contact (or it was deleted).');
        return owned({
          action,
          tx,
          services,
          contact,
          account,
          actor,
          scope,
          causedBy: causedBy as CausedBy,
        });
      }
    }
  };
}
