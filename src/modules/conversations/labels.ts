// Labels on a conversation: what the matter is (refund, vip, complaint), for the inbox's filters,
// rules and reports. They are the conversation's, not the contact's tags: a customer tagged `vip`
// may open a conversation labelled `refund` today and `delivery` next week. Spelled as tags are
// (contacts/fields.ts: lower-cased, 1–50 letters, digits, spaces or - _ : .), at most MAX_LABELS on
// one conversation. Every change is one `conversation.labeled` event, with `labelsAdded` and
// `labelsRemoved` (one of them empty), caused by the rule that made it when a rule did. A change
// may change the SLA policy that applies (hook `conversations.sla`).
import { invalidFields, normalizeTag, normalizeTags } from '../contacts/index.ts';
import { MAX_LABELS } from './limits.ts';
import { type ConversationServices, changeConversation } from './service.ts';

/** Adds labels (those it has already are ignored; nothing new: no event). */
export function addLabels(s: ConversationServices, accountId: string, id: string, raw: string[]) {
  const issues: { field: string; issue: string }[] = [];
  const labels = normalizeTags(raw, 'labels', issues);
  if (issues.length > 0) throw invalidFields(issues);
  return changeConversation(s, accountId, id, async (tx, row, now) => {
    const added = labels.filter((l) => !row.labels.includes(l));
    if (added.length === 0) return null;
    if (row.labels.length + added.length > MAX_LABELS) {
      throw invalidFields([
        { field: 'labels', issue: `a conversation carries at most ${MAX_LABELS} labels` },
      ]);
    }
    await tx.query('UPDATE conversations SET labels = $2, updated_at = $3 WHERE id = $1', [
      id,
      [...row.labels, ...added],
      now,
    ]);
    await s.events.hook(tx, 'conversations.sla', {
      accountId,
      conversation: { ...row, labels: [...row.labels, ...added] },
    });
    return { type: 'conversation.labeled' as const, extra: { labelsAdded: added, labelsRemoved: [] } };
  });
}

/** Removes a label; one the conversation does not carry changes nothing. */
export function removeLabel(s: ConversationServices, accountId: string, id: string, raw: string) {
  const label = normalizeTag(raw);
  return changeConversation(s, accountId, id, async (tx, row, now) => {
    if (label === null || !row.labels.includes(label)) return null;
    await tx.query('UPDATE conversations SET labels = $2, updated_at = $3 WHERE id = $1', [
      id,
      row.labels.filter((l) => l !== label),
      now,
    ]);
    const labels = row.labels.filter((l) => l !== label);
    await s.events.hook(tx, 'conversations.sla', { accountId, conversation: { ...row, labels } });
    return { type: 'conversation.labeled' as const, extra: { labelsAdded: [], labelsRemoved: [label] } };
  });
}
