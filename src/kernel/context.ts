// What every module's routes and services may be given: the config and the kernel's shared services
// of one app. A module that needs more (its own or a lower module's services) declares a context that
// extends this one; the composition (app-context.ts) is the union of them all.
import type { Config } from '../config.ts';
import type { Access } from './access/access.ts';
import type { Authenticator } from './access/auth.ts';
import type { ConsoleSessions } from './access/console-principal.ts';
import type { RateLimits } from './access/rate-limits.ts';
import type { UsageMeter } from './access/usage-meter.ts';
import type { SecretBox } from './crypto/secrets.ts';
import type { Database } from './database/db.ts';
import type { Jobs } from './jobs/jobs.ts';
import type { Metrics } from './observability/metrics.ts';
import type { Egress } from './outbound/egress.ts';
import type { EventOutbox } from './outbox/events.ts';

export interface KernelContext {
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
