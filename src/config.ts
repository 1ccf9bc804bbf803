// Configuration is read from the environment once, checked against the table below, and passed in
// as a frozen object. Nothing else in the code reads process.env.
//
// Settings of the published API (docs/configuration.md, the first rows) keep their plain names (PORT, DATABASE_URL, ...). Settings this
// project adds are named TIDINGS_*, and an unknown TIDINGS_* variable stops the start: a typo in a
// setting must not be silently ignored.

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | null;
  redisUrl: string | null;
  bootstrapToken: string | null;
  keyPrefix: string;
  publicBaseUrl: string;
  secretsKey: string | null;
  webhookAllowedHosts: string[];
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** json or pretty; null → pretty on a terminal, JSON otherwise (kernel/observability/log-format.ts). */
  logFormat: 'json' | 'pretty' | null;
  bodyLimitBytes: number;
  partnerRatePerSecond: number;
  monthlyQuotaOverride: number | null;
  rateLimitOverride: number | null;
  usageFlushMs: number;
  pgliteSharedBuffers: string;
  pgliteOptimizeParser: boolean;
  shutdownTimeoutMs: number;
  dbPoolSize: number;
  runWorkers: boolean;
  webhookTimeoutMs: number;
  webhookConcurrency: number;
  webhookEndpointConcurrency: number;
  webhookPollMs: number;
  eventRetentionDays: number;
  eventStreamPollMs: number;
  eventStreamHeartbeatMs: number;
  mediaRetentionDays: number;
  automationRetentionDays: number;
  bulkRetentionDays: number;
  callCallbackRetentionDays: number;
  usageRetentionDays: number;
  /** Null: messages are kept for ever. */
  messageRetentionDays: number | null;
  automationPollMs: number;
  automationLanes: number;
  automationScanMs: number;
  automationContactCapPerHour: number;
  jobSuperviseSeconds: number;
  bulkChunkSize: number;
  bulkJobExpireSeconds: number;
  apiKey: string | null;
  /** The CLI's API commands' server, account, profile and profile file (src/cli/profiles.ts). */
  cliUrl: string | null;
  cliAccountId: string | null;
  cliProfile: string | null;
  cliConfigFile: string | null;
  whatsappGraphUrl: string;
  providerTimeoutMs: number;
  twilioApiUrl: string;
  voicePollMs: number;
  campaignPollMs: number;
  campaignLanes: number;
  voiceSandboxStepMs: number;
  voiceLeaseMs: number;
  pricesFile: string | null;
  dispatchConcurrency: number;
  dispatchAccountConcurrency: number;
  dispatchRetryLimit: number;
  dispatchRetryDelaySeconds: number;
  dispatchInDoubtSeconds: number;
  dispatchJobExpireSeconds: number;
  /** A console session ends after this many minutes without a request. */
  consoleIdleMinutes: number;
  /** A console session ends this many hours after sign-in, however active. */
  consoleSessionHours: number;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

interface Setting<K extends keyof Config> {
  env: string;
  key: K;
  description: string;
  default: string | null;
  parse: (raw: string) => Config[K];
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

function integer(min: number, max: number) {
  return (raw: string): number => {
    if (!/^\d+$/.test(raw)) throw new Error(`must be a whole number between ${min} and ${max}`);
    const n = Number(raw);
    if (n < min || n > max) throw new Error(`must be between ${min} and ${max}`);
    return n;
  };
}

function url(protocols: string[]) {
  return (raw: string): string => {
    let parsed: URL;
    try {
      parsed = new URL(raw);
    } catch {
      throw new Error('must be a URL');
    }
    if (!protocols.includes(parsed.protocol)) throw new Error(`must use ${protocols.join(' or ')}`);
    return raw;
  };
}

function boolean(raw: string): boolean {
  if (['true', '1', 'yes'].includes(raw)) return true;
  if (['false', '0', 'no'].includes(raw)) return false;
  throw new Error('must be true or false');
}

// biome-ignore lint/suspicious/noExplicitAny: the table mixes settings of every value type
export const SETTINGS: Setting<any>[] = [
  { env: 'PORT', key: 'port', description: 'HTTP port', default: '3000', parse: integer(0, 65535) },
  { env: 'HOST', key: 'host', description: 'interface to listen on', default: '0.0.0.0', parse: (s) => s },
  {
    env: 'DATA_DIR',
    key: 'dataDir',
    description: 'folder of the embedded database and generated secrets',
    default: './data',
    parse: (s) => s,
  },
  {
    env: 'DATABASE_URL',
    key: 'databaseUrl',
    description: 'PostgreSQL connection string; unset → embedded database (PGlite) in DATA_DIR',
    default: null,
    parse: url(['postgres:', 'postgresql:']),
  },
  {
    env: 'REDIS_URL',
    key: 'redisUrl',
    description: 'Redis for rate-limit counters shared by several processes; unset → in-process counters',
    default: null,
    parse: url(['redis:', 'rediss:']),
  },
  {
    env: 'BOOTSTRAP_TOKEN',
    key: 'bootstrapToken',
    description: 'token for POST /partner/bootstrap; unset → generated at first start and printed once',
    default: null,
    parse: (s) => {
      if (s.length < 24) throw new Error('must be at least 24 characters');
      return s;
    },
  },
  {
    env: 'KEY_PREFIX',
    key: 'keyPrefix',
    description: 'prefix of every API key',
    default: 'tdg_',
    parse: (s) => {
      if (!/^[a-z][a-z0-9]{1,15}_$/.test(s))
        throw new Error('must be 2–16 lowercase letters/digits and end in _');
      return s;
    },
  },
  {
    env: 'PUBLIC_BASE_URL',
    key: 'publicBaseUrl',
    description: 'address clients reach this service at (links in error bodies and docs)',
    default: null,
    parse: (s) => url(['http:', 'https:'])(s).replace(/\/+$/, ''),
  },
  {
    env: 'SECRETS_KEY',
    key: 'secretsKey',
    description:
      'base64 of 32 bytes; encrypts provider credentials; unset in embedded mode → generated into DATA_DIR',
    default: null,
    parse: (s) => {
      if (Buffer.from(s, 'base64').length !== 32) throw new Error('must be the base64 of exactly 32 bytes');
      return s;
    },
  },
  {
    env: 'WEBHOOK_ALLOWED_HOSTS',
    key: 'webhookAllowedHosts',
    description: 'comma-separated hosts or CIDRs that webhook egress checks let through (e.g. 127.0.0.1)',
    default: '',
    parse: (s) =>
      s
        .split(',')
        .map((h) => h.trim())
        .filter(Boolean),
  },
  {
    env: 'LOG_LEVEL',
    key: 'logLevel',
    description: `one of ${LOG_LEVELS.join(', ')}`,
    default: 'info',
    parse: (s) => {
      if (!(LOG_LEVELS as readonly string[]).includes(s))
        throw new Error(`must be one of ${LOG_LEVELS.join(', ')}`);
      return s as Config['logLevel'];
    },
  },
  {
    env: 'TIDINGS_CONSOLE_IDLE_MINUTES',
    key: 'consoleIdleMinutes',
    description: 'a console session ends after this many minutes without a request',
    default: '60',
    parse: integer(1, 24 * 60),
  },
  {
    env: 'TIDINGS_CONSOLE_SESSION_HOURS',
    key: 'consoleSessionHours',
    description: 'a console session ends this many hours after sign-in, however active',
    default: '12',
    parse: integer(1, 24 * 30),
  },
  {
    env: 'TIDINGS_LOG_FORMAT',
    key: 'logFormat',
    description:
      'json (one object per line) or pretty (one readable line each); unset → pretty on a terminal, JSON otherwise',
    default: null,
    parse: (s) => {
      if (s !== 'json' && s !== 'pretty') throw new Error('must be json or pretty');
      return s;
    },
  },
  {
    env: 'TIDINGS_BODY_LIMIT',
    key: 'bodyLimitBytes',
    description: 'largest request body in bytes (413 above)',
    default: '1048576',
    parse: integer(1024, 64 * 1024 * 1024),
  },
  {
    env: 'TIDINGS_PARTNER_RATE_LIMIT',
    key: 'partnerRatePerSecond',
    description: 'requests per second allowed to each partner on /partner/* endpoints',
    default: '50',
    parse: integer(1, 100000),
  },
  {
    env: 'TIDINGS_MONTHLY_QUOTA_OVERRIDE',
    key: 'monthlyQuotaOverride',
    description: "replaces every finite plan's monthly call quota (for staging and tests)",
    default: null,
    parse: integer(1, 1_000_000_000),
  },
  {
    env: 'TIDINGS_RATE_LIMIT_OVERRIDE',
    key: 'rateLimitOverride',
    description:
      "replaces every plan's per-second limit per account (a server of a few busy accounts, load tests)",
    default: null,
    parse: integer(1, 10_000_000),
  },
  {
    env: 'TIDINGS_USAGE_FLUSH_MS',
    key: 'usageFlushMs',
    description:
      'how often a process writes the API calls it counted (usage reports of other processes lag by this)',
    default: '250',
    parse: integer(10, 60000),
  },
  {
    env: 'TIDINGS_PGLITE_SHARED_BUFFERS',
    key: 'pgliteSharedBuffers',
    description:
      'page cache of the embedded database (PostgreSQL shared_buffers); its memory is never returned while it runs',
    default: '32MB',
    parse: (s) => {
      if (!/^[1-9][0-9]*(kB|MB|GB)$/.test(s)) throw new Error('must be a size such as 32MB');
      return s;
    },
  },
  {
    env: 'TIDINGS_PGLITE_OPTIMIZE_PARSER',
    key: 'pgliteOptimizeParser',
    description:
      "let V8 optimise the embedded database's SQL parser like the rest of it: about 600 MiB more memory for a second when it does",
    default: 'false',
    parse: boolean,
  },
  {
    env: 'TIDINGS_SHUTDOWN_TIMEOUT_MS',
    key: 'shutdownTimeoutMs',
    description: 'how long a graceful shutdown waits for in-flight requests and jobs',
    default: '10000',
    parse: integer(0, 600000),
  },
  {
    env: 'TIDINGS_DB_POOL_SIZE',
    key: 'dbPoolSize',
    description: 'PostgreSQL connections per process',
    default: '10',
    parse: integer(1, 500),
  },
  {
    env: 'TIDINGS_RUN_WORKERS',
    key: 'runWorkers',
    description: 'whether this process also runs background jobs (false → API only)',
    default: 'true',
    parse: boolean,
  },
  {
    env: 'TIDINGS_WEBHOOK_TIMEOUT_MS',
    key: 'webhookTimeoutMs',
    description: 'how long a webhook receiver has to answer before the attempt fails',
    default: '10000',
    parse: integer(100, 60000),
  },
  {
    env: 'TIDINGS_WEBHOOK_CONCURRENCY',
    key: 'webhookConcurrency',
    description: 'webhook attempts in flight at once in each process',
    default: '64',
    parse: integer(1, 10000),
  },
  {
    env: 'TIDINGS_WEBHOOK_ENDPOINT_CONCURRENCY',
    key: 'webhookEndpointConcurrency',
    description: 'webhook attempts in flight at once to one endpoint, in each process',
    default: '8',
    parse: integer(1, 1000),
  },
  {
    env: 'TIDINGS_WEBHOOK_POLL_MS',
    key: 'webhookPollMs',
    description: 'how often the webhook dispatcher looks for due retries between notifications',
    default: '1000',
    parse: integer(10, 60000),
  },
  {
    env: 'TIDINGS_AUTOMATION_POLL_MS',
    key: 'automationPollMs',
    description: 'how often the automation worker looks for events between notifications',
    default: '1000',
    parse: integer(10, 60000),
  },
  {
    env: 'TIDINGS_AUTOMATION_LANES',
    key: 'automationLanes',
    description:
      "automation inbox loops per process, each on its own connection and its share of the accounts (an account's events stay in order)",
    default: '2',
    parse: integer(1, 16),
  },
  {
    env: 'TIDINGS_AUTOMATION_SCAN_MS',
    key: 'automationScanMs',
    description:
      'how often each process looks for due timed triggers (conversation.unanswered, contact.inactive)',
    default: '15000',
    parse: integer(50, 3600000),
  },
  {
    env: 'TIDINGS_AUTOMATION_CONTACT_CAP_PER_HOUR',
    key: 'automationContactCapPerHour',
    description: 'messages automation may send one contact in an hour; a send over it is suppressed',
    default: '20',
    parse: integer(1, 10000),
  },
  {
    env: 'TIDINGS_EVENT_RETENTION_DAYS',
    key: 'eventRetentionDays',
    description: 'events and finished webhook deliveries older than this are deleted',
    default: '30',
    parse: integer(1, 3650),
  },
  {
    env: 'TIDINGS_EVENT_STREAM_POLL_MS',
    key: 'eventStreamPollMs',
    description: 'how often an open GET /events/stream looks for new events of its account',
    default: '500',
    parse: integer(10, 60000),
  },
  {
    env: 'TIDINGS_EVENT_STREAM_HEARTBEAT_MS',
    key: 'eventStreamHeartbeatMs',
    description: 'how often an open GET /events/stream sends a comment line when it has nothing to send',
    default: '15000',
    parse: integer(100, 300000),
  },
  {
    env: 'TIDINGS_MEDIA_RETENTION_DAYS',
    key: 'mediaRetentionDays',
    description: 'uploaded and received media (its bytes) older than this are deleted',
    default: '30',
    parse: integer(1, 3650),
  },
  {
    env: 'TIDINGS_AUTOMATION_RETENTION_DAYS',
    key: 'automationRetentionDays',
    description:
      "finished rule runs, journey runs (with their steps), sequence enrollments and automation webhook calls older than this are deleted, hourly; a contact's latest run or enrollment of each journey or sequence is kept (reentry rules read it), so are the runs of timed triggers",
    default: '90',
    parse: integer(1, 3650),
  },
  {
    env: 'TIDINGS_BULK_RETENTION_DAYS',
    key: 'bulkRetentionDays',
    description: 'finished bulk jobs (with their per-item results) older than this are deleted, hourly',
    default: '30',
    parse: integer(1, 3650),
  },
  {
    env: 'TIDINGS_CALL_CALLBACK_RETENTION_DAYS',
    key: 'callCallbackRetentionDays',
    description:
      "the voice provider's recorded callbacks of ended calls older than this are deleted, hourly (the calls stay)",
    default: '30',
    parse: integer(1, 3650),
  },
  {
    env: 'TIDINGS_USAGE_RETENTION_DAYS',
    key: 'usageRetentionDays',
    description: 'daily API-call counts older than this are deleted, hourly (the monthly counts stay)',
    default: '400',
    parse: integer(32, 36500),
  },
  {
    env: 'TIDINGS_MESSAGE_RETENTION_DAYS',
    key: 'messageRetentionDays',
    description:
      'unset: messages are kept for ever; set: messages older than this (and the files they carried) are deleted, hourly; the wallet ledger is kept whatever this says',
    default: null,
    parse: integer(1, 36500),
  },
  {
    env: 'TIDINGS_JOB_SUPERVISE_SECONDS',
    key: 'jobSuperviseSeconds',
    description: 'how often each process looks for background jobs whose worker died, to retry them',
    default: '30',
    parse: integer(1, 3600),
  },
  {
    env: 'TIDINGS_BULK_CHUNK_SIZE',
    key: 'bulkChunkSize',
    description: 'bulk job items applied per transaction (a crash loses at most one chunk of progress)',
    default: '500',
    parse: integer(1, 1000),
  },
  {
    env: 'TIDINGS_BULK_JOB_EXPIRE_SECONDS',
    key: 'bulkJobExpireSeconds',
    description: 'a bulk job run unfinished after this long is presumed dead and resumed elsewhere',
    default: '120',
    parse: integer(1, 86400),
  },
  {
    env: 'TIDINGS_API_KEY',
    key: 'apiKey',
    description:
      'API key that CLI commands calling the HTTP API use (send, contacts, messages, webhooks listen); over the profile, under --key',
    default: null,
    parse: (s) => s,
  },
  // The CLI's API commands read these four themselves; they are settings so that the check for
  // unknown TIDINGS_* variables lets a shell that has them set start the server too.
  {
    env: 'TIDINGS_URL',
    key: 'cliUrl',
    description: "the server CLI commands calling the HTTP API use; over the profile's, under --url",
    default: null,
    parse: (s) => s,
  },
  {
    env: 'TIDINGS_ACCOUNT_ID',
    key: 'cliAccountId',
    description: 'with a partner key: the account CLI commands act on; over the profile’s, under --account',
    default: null,
    parse: (s) => s,
  },
  {
    env: 'TIDINGS_PROFILE',
    key: 'cliProfile',
    description: 'the profile (tidings login) CLI commands use; under --profile; unset → default',
    default: null,
    parse: (s) => s,
  },
  {
    env: 'TIDINGS_CONFIG',
    key: 'cliConfigFile',
    description: 'the file tidings login keeps profiles in; unset → $XDG_CONFIG_HOME/tidings/config.json',
    default: null,
    parse: (s) => s,
  },
  {
    env: 'TIDINGS_WHATSAPP_GRAPH_URL',
    key: 'whatsappGraphUrl',
    description:
      'base URL of the WhatsApp Cloud API (Graph API with its version) that whatsapp_cloud channels call',
    default: 'https://graph.facebook.com/v21.0',
    parse: (s) => url(['http:', 'https:'])(s).replace(/\/+$/, ''),
  },
  {
    env: 'TIDINGS_TWILIO_API_URL',
    key: 'twilioApiUrl',
    description: "base URL of Twilio's REST API that twilio voice channels call",
    default: 'https://api.twilio.com',
    parse: (s) => url(['http:', 'https:'])(s).replace(/\/+$/, ''),
  },
  {
    env: 'TIDINGS_CAMPAIGN_POLL_MS',
    key: 'campaignPollMs',
    description:
      'how often the campaign sender looks for running campaigns with recipients due (a start or resume in the same process wakes it at once)',
    default: '200',
    parse: integer(10, 60000),
  },
  {
    env: 'TIDINGS_CAMPAIGN_LANES',
    key: 'campaignLanes',
    description:
      'campaign sender loops per process, each on its own connection; rounds of one campaign run side by side, each on its own recipients',
    default: '4',
    parse: integer(1, 16),
  },
  {
    env: 'TIDINGS_VOICE_POLL_MS',
    key: 'voicePollMs',
    description: 'how often the voice dialler looks for calls to place and sandbox calls to play',
    default: '250',
    parse: integer(10, 60000),
  },
  {
    env: 'TIDINGS_VOICE_SANDBOX_STEP_MS',
    key: 'voiceSandboxStepMs',
    description:
      "the sandbox voice simulator's pace: the time between a sandbox call's steps (ringing, answer, each prompt); a gather waits its timeout scaled by it (1000: real time)",
    default: '1000',
    parse: integer(1, 60000),
  },
  {
    env: 'TIDINGS_VOICE_LEASE_MS',
    key: 'voiceLeaseMs',
    description:
      'how long a dialler holds a call it is placing; a call still without the provider’s answer after it failed as PROVIDER_UNKNOWN_OUTCOME',
    default: '60000',
    parse: integer(100, 3600000),
  },
  {
    env: 'TIDINGS_PROVIDER_TIMEOUT_MS',
    key: 'providerTimeoutMs',
    description:
      'how long a call to a messaging provider may take before it counts as failed (and is retried)',
    default: '15000',
    parse: integer(100, 120000),
  },
  {
    env: 'TIDINGS_PRICES_FILE',
    key: 'pricesFile',
    description:
      'JSON file of per-country message prices that replace the shipped defaults (docs/messaging.md)',
    default: null,
    parse: (s) => s,
  },
  {
    env: 'TIDINGS_DISPATCH_CONCURRENCY',
    key: 'dispatchConcurrency',
    description: 'messages handed to providers at once by each process',
    default: '32',
    parse: integer(1, 1000),
  },
  {
    env: 'TIDINGS_DISPATCH_ACCOUNT_CONCURRENCY',
    key: 'dispatchAccountConcurrency',
    description:
      'messages of one account each process holds for hand-over at once (the rest wait their turn a second later): one account whose provider hangs cannot take every slot',
    default: '8',
    parse: integer(1, 1000),
  },
  {
    env: 'TIDINGS_DISPATCH_RETRY_LIMIT',
    key: 'dispatchRetryLimit',
    description: 'retries of a message whose provider was unreachable, before it fails (and is refunded)',
    default: '5',
    parse: integer(0, 100),
  },
  {
    env: 'TIDINGS_DISPATCH_RETRY_DELAY_SECONDS',
    key: 'dispatchRetryDelaySeconds',
    description: 'first wait before such a retry; each later wait doubles',
    default: '5',
    parse: integer(1, 3600),
  },
  {
    env: 'TIDINGS_DISPATCH_IN_DOUBT_SECONDS',
    key: 'dispatchInDoubtSeconds',
    description:
      "how long a message whose hand-over was cut off (a crash) waits for the provider's status callback before it is sent again",
    default: '300',
    parse: integer(0, 86_400),
  },
  {
    env: 'TIDINGS_DISPATCH_JOB_EXPIRE_SECONDS',
    key: 'dispatchJobExpireSeconds',
    description:
      "how long a dispatch job may run before it is presumed dead (its worker's process gone) and run again",
    default: '60',
    parse: integer(5, 3600),
  },
];

/** Parses the environment. Throws a ConfigError naming every bad setting at once. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const problems: string[] = [];
  const known = new Set(SETTINGS.map((s) => s.env));
  for (const name of Object.keys(env)) {
    if (name.startsWith('TIDINGS_') && !known.has(name)) problems.push(`${name}: unknown setting`);
  }
  const values: Record<string, unknown> = {};
  for (const setting of SETTINGS) {
    const raw = env[setting.env];
    const source = raw === undefined || raw === '' ? setting.default : raw;
    if (source === null) {
      values[setting.key] = null;
      continue;
    }
    try {
      values[setting.key] = setting.parse(source);
    } catch (err) {
      problems.push(
        `${setting.env}=${JSON.stringify(redact(setting.env, source))}: ${(err as Error).message}`,
      );
    }
  }
  if (problems.length > 0) throw new ConfigError(`Invalid configuration:\n  ${problems.join('\n  ')}`);
  const config = values as unknown as Config;
  if (!config.publicBaseUrl) config.publicBaseUrl = `http://localhost:${config.port}`;
  return Object.freeze(config);
}

/** A config for tests and tools: the defaults with some values replaced. */
export function makeConfig(overrides: Partial<Config> = {}): Config {
  return Object.freeze({ ...loadConfig({}), ...overrides });
}

function redact(name: string, value: string): string {
  return /TOKEN|KEY|URL/.test(name) && name !== 'KEY_PREFIX' ? '<redacted>' : value;
}
