// A coexistence number's two syncs, asked of Meta right after the channel is saved (never before:
// the webhooks they cause must find the channel to reach the account): first the Business app's
// contacts (`smb_app_state_sync`), then its chat history (`history`), as Meta's coexistence page
// orders them. Meta takes each once and within 24 hours of the signup, and a repeated request has
// broken businesses' phone apps (Chatwoot's thread): so each is asked until Meta answers, and never
// again once it may have reached Meta: an answer lost on the way is written down as `unknown`, not
// retried. Meta unreachable before the request left: the job is tried again.
import type { Channels } from '../../channels/registry.ts';
import type { SyncState, WhatsAppSettings } from '../../channels/settings.ts';
import type { Database, Tx } from '../../kernel/database/db.ts';
import type { JobDefinition } from '../../kernel/jobs/jobs.ts';
import { type ChannelRow, lockWhatsApp, saveWhatsApp, toChannelConfig } from './repo.ts';

export const COEXISTENCE_SYNC_JOB = 'channel.coexistence-sync';

export interface SyncJobData {
  accountId: string;
  phoneNumberId: string;
}

interface SyncDeps {
  db: Database;
  channels: Channels;
  now: () => Date;
}

const SYNCS = [
  { key: 'contacts', syncType: 'smb_app_state_sync' },
  { key: 'history', syncType: 'history' },
] as const;

/** Writes one sync's state into the channel, if the channel is still this number. */
async function record(d: SyncDeps, data: SyncJobData, key: 'contacts' | 'history', state: SyncState) {
  await d.db.transaction(async (tx) => {
    const channel = await lockWhatsApp(tx, data.accountId);
    const w = channel?.whatsapp;
    if (!channel || w?.phoneNumberId !== data.phoneNumberId) return;
    // The history may be arriving already (its webhooks can beat Meta's answer to the request):
    // what they noted stays, the request's id joins it.
    const noted = w.syncs?.[key];
    const merged = noted ? { ...noted, requestId: state.requestId ?? noted.requestId } : state;
    const whatsapp: WhatsAppSettings = { ...w, syncs: { ...(w.syncs ?? {}), [key]: merged } };
    await saveWhatsApp(tx, data.accountId, channel.row, whatsapp);
  });
}

export async function runCoexistenceSyncs(d: SyncDeps, data: SyncJobData): Promise<void> {
  const { rows } = await d.db.query<ChannelRow>(
    'SELECT provider, settings, secrets_sealed, updated_at FROM account_channels WHERE account_id = $1',
    [data.accountId],
  );
  const channel = toChannelConfig(rows[0] ?? null);
  const w = channel.whatsapp;
  if (channel.provider !== 'whatsapp_cloud' || w?.phoneNumberId !== data.phoneNumberId) return;
  if (w.onboarding?.mode !== 'coexistence') return;
  const token = d.channels.secretsOf(channel).accessToken;
  const meta = d.channels.whatsappOnboarding();
  for (const { key, syncType } of SYNCS) {
    if (w.syncs?.[key]) continue;
    const requestedAt = d.now().toISOString();
    const asked = await meta.requestSync(token, data.phoneNumberId, syncType);
    if (asked.ok) {
      await record(d, data, key, { status: 'requested', requestId: asked.requestId, requestedAt });
      continue;
    }
    if (asked.lost) {
      await record(d, data, key, { status: 'unknown', requestId: null, requestedAt, message: asked.message });
      continue;
    }
    if (asked.retry) throw new Error(`Meta could not be asked for the ${key} sync: ${asked.message}`);
    await record(d, data, key, {
      status: 'refused',
      requestId: null,
      requestedAt,
      providerCode: asked.metaCode,
      message: asked.message,
    });
  }
}

export function coexistenceSyncJob(d: SyncDeps): JobDefinition<SyncJobData> {
  return {
    name: COEXISTENCE_SYNC_JOB,
    retryLimit: 10,
    retryDelaySeconds: 30,
    expireInSeconds: 120,
    handle: (data) => runCoexistenceSyncs(d, data),
  };
}

/** What the history's webhooks and its import say of it (history-import.ts, callbacks/apply.ts). */
export interface HistoryNote {
  status?: SyncState['status'];
  progress?: number;
  phase?: number;
  addMessages?: number;
  providerCode?: number | null;
  message?: string | null;
}

/**
 * Notes the history's progress on the channel (a coexistence number's only). A history Meta
 * shares without our request being on record (its answer lost) is the same history: the state is
 * made. The progress only goes up: chunks arrive in any order.
 */
export async function noteHistory(tx: Tx, accountId: string, note: HistoryNote, now: Date): Promise<void> {
  const channel = await lockWhatsApp(tx, accountId);
  const w = channel?.whatsapp;
  if (!channel || w?.onboarding?.mode !== 'coexistence') return;
  const before: SyncState = w.syncs?.history ?? {
    status: 'importing',
    requestId: null,
    requestedAt: now.toISOString(),
  };
  const history: SyncState = {
    ...before,
    ...(note.status && before.status !== 'complete' ? { status: note.status } : {}),
    ...(note.progress !== undefined ? { progress: Math.max(before.progress ?? 0, note.progress) } : {}),
    ...(note.phase !== undefined ? { phase: Math.max(before.phase ?? 0, note.phase) } : {}),
    ...(note.providerCode !== undefined ? { providerCode: note.providerCode } : {}),
    ...(note.message !== undefined ? { message: note.message } : {}),
    messages: (before.messages ?? 0) + (note.addMessages ?? 0),
    updatedAt: now.toISOString(),
  };
  const whatsapp: WhatsAppSettings = { ...w, syncs: { ...(w.syncs ?? {}), history } };
  await saveWhatsApp(tx, accountId, channel.row, whatsapp);
}
