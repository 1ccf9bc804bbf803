// What route plugins and services are given: the config and the shared services of one app.
import type { Config } from './config.ts';
import type { Access } from './kernel/access.ts';
import type { Authenticator } from './kernel/auth.ts';
import type { Database } from './kernel/db.ts';
import type { Jobs } from './kernel/jobs.ts';
import type { RateLimits } from './kernel/limits.ts';
import type { Metrics } from './kernel/metrics.ts';

export interface AppContext {
  config: Config;
  db: Database;
  jobs: Jobs;
  auth: Authenticator;
  rateLimits: RateLimits;
  metrics: Metrics;
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
}
