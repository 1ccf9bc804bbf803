// The webhook fields that speak of the business rather than of one message: a customer's marketing
// preference (`user_preferences`), the number's quality and messaging limit
// (`phone_number_quality_update`), the business account (`account_update`) and errors about the
// number or the app (`errors`). Like callbacks.ts, parsing never throws: what cannot be read comes
// back as `unknown`, to be logged.
import { providerDigits } from '../../kernel/values/phones.ts';
import { providerUserId } from '../../kernel/values/whatsapp-user-ids.ts';
import type { ProviderUpdate } from '../types.ts';
import { isRecord, type Json, records, unixSeconds } from './json.ts';

const text = (value: unknown) => (typeof value === 'string' && value ? value : null);

/** The time of a change: the value's own timestamp, else the entry's `time`, else now. */
function timeOf(value: unknown, entryTime: unknown): Date {
  return unixSeconds(value) ?? unixSeconds(entryTime) ?? new Date();
}

/**
 * `user_preferences`: each marketing stop or resume, naming the customer by wa_id, by user id
 * (since April 2026; the wa_id may then be left out), or both.
 */
export function userPreferencesChange(value: Json, entryTime: unknown): ProviderUpdate[] {
  const preferences = records(value.user_preferences);
  if (preferences.length === 0) return [{ kind: 'unknown', field: 'user_preferences', raw: value }];
  return preferences.map((p): ProviderUpdate => {
    const waId = providerDigits(p.wa_id);
    const userId = providerUserId(p.user_id);
    const category = text(p.category);
    const stop = p.value === 'stop';
    if ((!waId && !userId) || category !== 'marketing_messages' || (!stop && p.value !== 'resume'))
      return { kind: 'unknown', field: 'user_preferences', raw: p };
    return {
      kind: 'marketing_preference',
      waId,
      userId,
      parentUserId: providerUserId(p.parent_user_id),
      stopped: stop,
      at: timeOf(p.timestamp, entryTime),
      detail: text(p.detail),
    };
  });
}

/** `phone_number_quality_update`: the number's quality event and its messaging limit. */
export function numberQualityChange(value: Json, entryTime: unknown): ProviderUpdate {
  const event = text(value.event);
  if (!event) return { kind: 'unknown', field: 'phone_number_quality_update', raw: value };
  const limit = (v: unknown) => (typeof v === 'number' ? String(v) : text(v));
  return {
    kind: 'number_quality',
    signal: {
      displayPhoneNumber: providerDigits(value.display_phone_number),
      event,
      currentLimit: limit(value.current_limit),
      previousLimit: limit(value.old_limit),
      maxDailyConversations: limit(value.max_daily_conversations_per_business),
      at: timeOf(undefined, entryTime),
    },
  };
}

/** `account_update`: the event, and whatever details Meta gives with it (ban, restriction, violation). */
export function accountUpdateChange(value: Json, entryTime: unknown): ProviderUpdate {
  const event = text(value.event);
  if (!event) return { kind: 'unknown', field: 'account_update', raw: value };
  const { event: _event, phone_number, ...details } = value;
  return {
    kind: 'account_update',
    signal: {
      event,
      phoneNumber: providerDigits(phone_number),
      details,
      at: timeOf(undefined, entryTime),
    },
  };
}

/** `errors`: each error Meta reports about the number or the app. */
export function errorsChange(value: Json, entryTime: unknown): ProviderUpdate[] {
  const errors = records(value.errors);
  if (errors.length === 0) return [{ kind: 'unknown', field: 'errors', raw: value }];
  return errors.map((e): ProviderUpdate => {
    const data = isRecord(e.error_data) ? e.error_data : {};
    return {
      kind: 'channel_error',
      error: {
        providerCode: typeof e.code === 'number' ? e.code : null,
        title: text(e.title) ?? 'Meta reported an error without a title',
        message: text(e.message) ?? text(e.title) ?? '',
        details: text(data.details),
        at: timeOf(undefined, entryTime),
      },
    };
  });
}
