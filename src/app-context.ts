// What route plugins and services are given: the kernel's context (kernel/context.ts) and the
// shared services of the modules, for one app. Only the composition (app.ts, server.ts) names it.

import type { Channels } from './channels/registry.ts';
import type { KernelContext } from './kernel/context.ts';
import type { ActionTargets } from './modules/automation/index.ts';
import type { AutomationWorker } from './modules/automation-worker/index.ts';
import type { VoiceDialer } from './modules/calls/index.ts';
import type { CampaignSender } from './modules/campaigns/index.ts';
import type { MediaStore } from './modules/media/index.ts';
import type { AcceptQueue } from './modules/messages/index.ts';
import type { PriceTable } from './modules/pricing/index.ts';
import type { RetentionPruner } from './modules/retention/index.ts';
import type { ApprovedTemplates } from './modules/templates/index.ts';
import type { WebhookDispatcher } from './modules/webhooks/index.ts';

export type { RouteInfo } from './kernel/context.ts';

export interface AppContext extends KernelContext {
  /** Whether the sequences and journeys automation actions name exist (rules check them). */
  actionTargets: ActionTargets;
  /** Message prices by country and category (the shipped table, or TIDINGS_PRICES_FILE over it). */
  prices: PriceTable;
  /** Gathers concurrent sends into shared transactions. */
  acceptQueue: AcceptQueue;
  /** Approved templates as sends look them up, cached for a second. */
  approvedTemplates: ApprovedTemplates;
  /** The messaging providers: the sandbox and the WhatsApp Cloud API. */
  channels: Channels;
  /** Delivers webhooks; started only in processes that run workers. */
  dispatcher: WebhookDispatcher;
  /** Runs rules on the events that reach automation; started only in processes that run workers. */
  automation: AutomationWorker;
  /** Places queued calls and plays sandbox calls; started only in processes that run workers. */
  voice: VoiceDialer;
  /** Sends running broadcast campaigns; started only in processes that run workers. */
  campaigns: CampaignSender;
  /** Uploaded and received files; prunes them hourly in processes that run workers. */
  media: MediaStore;
  /** Deletes what is past its retention (modules/retention/), as the hourly job does. */
  retention: RetentionPruner;
}
