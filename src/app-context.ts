// What route plugins and services are given: the config and the shared services of one app.
import type { Channels } from './channels/registry.ts';
import type { Config } from './config.ts';
import type { Access } from './kernel/access/access.ts';
import type { Authenticator } from './kernel/access/auth.ts';
import type { ConsoleSessions } from './kernel/access/console-principal.ts';
import type { RateLimits } from './kernel/access/rate-limits.ts';
import type { UsageMeter } from './kernel/access/usage-meter.ts';
import type { SecretBox } from './kernel/crypto/secrets.ts';
import type { Database } from './kernel/database/db.ts';
import type { Jobs } from './kernel/jobs/jobs.ts';
import type { Metrics } from './kernel/observability/metrics.ts';
import type { Egress } from './kernel/outbound/egress.ts';
import type { EventOutbox } from './kernel/outbox/events.ts';
import type { AutomationWorker } from './modules/automation/worker.ts';
import type { VoiceDialer } from './modules/calls/dialer.ts';
import type { CampaignSender } from './modules/campaigns/sender.ts';
import type { MediaStore } from './modules/media/service.ts';
import type { AcceptQueue } from './modules/messages/accept-queue.ts';
import type { PriceTable } from './modules/pricing/prices.ts';
import type { RetentionPruner } from './modules/retention/prune.ts';
import type { ApprovedTemplates } from './modules/templates/approved.ts';
import type { WebhookDispatcher } from './modules/webhooks/dispatcher.ts';

export interface AppContext {
  config: Config;
  db: Database;
  jobs: Jobs;
  auth: Authenticator;
  /** Console sessions as the access policy reads them (cached for a second). */
  sessions: ConsoleSessions;
  rateLimits: RateLimits;
  /** Counts admitted calls (monthly quota, usage reports) off the request path. */
  usage: UsageMeter;
  metrics: Metrics;
  /** Emits events (with their webhook deliveries) inside the caller's transaction. */
  events: EventOutbox;
  /** Outbound HTTP that refuses private and reserved addresses. */
  egress: Egress;
  /** Seals and opens secrets kept at rest. */
  secrets: SecretBox;
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
  /** Every route with its declared access, as registered (for docs and route-wide tests). */
  routes: RouteInfo[];
  /** The clock; tests replace it to move time. */
  now: () => Date;
}

export interface RouteInfo {
  method: string;
  url: string;
  access: Access;
  documented: boolean;
  /** A console agent may call it (access.ts, `agents`). */
  agents: boolean;
}
