// A coexistence number's chat history (Meta's `history` webhook field, docs/history/issue-46-meta.md
// § 9): value.history[] items, each either a chunk ({metadata: {phase, chunk_order, progress},
// threads: [{id: the customer's number, context: {user_id, username}, messages: [{from, id,
// timestamp, type, …, history_context: {status}}]}]}) or the business's refusal ({errors: [{code:
// 2593109, …}]}). A message `from` the business's own number was sent from the app; a
// `media_placeholder` (a file, whose bytes Meta sends separately for the last 14 days only) is
// kept whole as unsupported content. The separate media webhook (value.messages[]) is logged, not
// imported. Like callbacks.ts, parsing never throws.
import { fromProviderDigits, providerDigits } from '../../kernel/values/phones.ts';
import { providerUserId, usernameFrom } from '../../kernel/values/whatsapp-user-ids.ts';
import type { HistoryMessage, HistoryThread, ProviderUpdate } from '../types.ts';
import { parseContent } from './inbound.ts';
import { isRecord, type Json, records, unixSeconds } from './json.ts';

const text = (value: unknown) => (typeof value === 'string' && value ? value : null);
const integer = (value: unknown) => (typeof value === 'number' && Number.isInteger(value) ? value : null);

function message(m: Json, business: string | null): HistoryMessage | null {
  const id = text(m.id);
  const sentAt = unixSeconds(m.timestamp);
  if (!id || !sentAt) return null;
  const providerType = text(m.type) ?? '';
  const parsed = parseContent(providerType, m) ?? {
    type: 'unsupported' as const,
    content: { unsupported: { providerType, raw: m } },
  };
  const context = isRecord(m.history_context) ? m.history_context : {};
  return {
    providerMessageId: id,
    fromBusiness: business !== null && providerDigits(m.from) === business,
    sentAt,
    type: parsed.type,
    content: parsed.content,
    status: text(context.status),
  };
}

function thread(t: Json, business: string | null): HistoryThread | null {
  const context = isRecord(t.context) ? t.context : {};
  const phone = fromProviderDigits(t.id) ?? fromProviderDigits(context.wa_id);
  const userId = providerUserId(context.user_id);
  if (!phone && !userId) return null;
  const messages = records(t.messages).flatMap((m) => {
    const parsed = message(m, business);
    return parsed ? [parsed] : [];
  });
  return { phone, userId, username: usernameFrom(context.username), messages };
}

export function historyChange(value: Json): ProviderUpdate[] {
  const metadata = isRecord(value.metadata) ? value.metadata : {};
  const business = providerDigits(metadata.display_phone_number);
  const items = records(value.history);
  if (items.length === 0) return [{ kind: 'unknown', field: 'history', raw: value }];
  return items.map((item): ProviderUpdate => {
    try {
      const errors = records(item.errors);
      if (errors.length > 0) {
        const e = errors[0]!;
        return {
          kind: 'history_declined',
          providerCode: integer(e.code),
          message: text(e.message) ?? text(e.title) ?? 'History sharing is turned off by the business',
        };
      }
      const meta = isRecord(item.metadata) ? item.metadata : {};
      const phase = integer(meta.phase);
      const chunkOrder = integer(meta.chunk_order);
      const progress = integer(meta.progress);
      if (phase === null || chunkOrder === null || progress === null)
        return { kind: 'unknown', field: 'history', raw: item };
      const threads = records(item.threads).flatMap((t) => {
        const parsed = thread(t, business);
        return parsed ? [parsed] : [];
      });
      return { kind: 'history_chunk', chunk: { phase, chunkOrder, progress, threads } };
    } catch {
      return { kind: 'unknown', field: 'history', raw: item };
    }
  });
}
