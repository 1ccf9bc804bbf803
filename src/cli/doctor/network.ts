// The doctor's checks of what lies outside the database: Redis (the per-second limits' shared
// windows), the public URL the API hands out and providers call back, and the egress settings.
import { connect } from 'node:net';
import { Redis } from 'ioredis';
import type { Config } from '../../config.ts';
import { Egress } from '../../kernel/outbound/egress.ts';
import { type Finding, fail, ok, reason, warn, within } from './findings.ts';

const TIMEOUT_MS = 3000;

export async function checkRedis(config: Config): Promise<Finding> {
  if (!config.redisUrl) {
    return config.databaseUrl
      ? warn(
          'redis',
          "no REDIS_URL: each process keeps its own per-second windows, so N processes let an account send N times its plan's rate; set REDIS_URL before running more than one",
        )
      : ok('redis', 'not needed with the embedded database (one process)');
  }
  const redis = new Redis(config.redisUrl, {
    lazyConnect: true,
    connectTimeout: TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
  });
  redis.on('error', () => {});
  try {
    await within(TIMEOUT_MS, 'connect', () => redis.connect());
    await within(TIMEOUT_MS, 'PING', () => redis.ping());
    const info = await redis.info('server');
    const version = /redis_version:(\S+)/.exec(info)?.[1] ?? '?';
    let policy: string | null = null;
    try {
      policy = ((await redis.config('GET', 'maxmemory-policy')) as string[])[1] ?? null;
    } catch {
      // CONFIG may be disabled (managed Redis): the policy is then the operator's to check.
    }
    if (policy?.startsWith('allkeys-')) {
      return warn(
        'redis',
        `Redis ${version} answers, but maxmemory-policy is ${policy}: when full it evicts the rate-limit windows too; use noeviction or a volatile-* policy`,
      );
    }
    return ok('redis', `Redis ${version} answers${policy ? ` (maxmemory-policy ${policy})` : ''}`);
  } catch (err) {
    return fail(
      'redis',
      `cannot reach REDIS_URL (${reason(err)}): the API still answers, but each process then limits alone; start Redis or fix the URL`,
    );
  } finally {
    redis.disconnect();
  }
}

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

export async function checkPublicUrl(config: Config): Promise<Finding[]> {
  const base = new URL(config.publicBaseUrl);
  const findings: Finding[] = [];
  if (base.protocol === 'http:' && !LOCAL_HOSTS.has(base.hostname)) {
    findings.push(
      warn(
        'public-url',
        `PUBLIC_BASE_URL ${config.publicBaseUrl} is plain http: WhatsApp and Twilio call back only over https, and the console's cookie is Secure only then; put TLS in front and give its https URL`,
      ),
    );
  }
  const healthz = `${config.publicBaseUrl.replace(/\/+$/, '')}/healthz`;
  try {
    const res = await fetch(healthz, { signal: AbortSignal.timeout(TIMEOUT_MS) });
    const body = (await res.json().catch(() => null)) as { status?: string } | null;
    if (res.status === 200 && body?.status === 'ok') {
      findings.push(ok('public-url', `${config.publicBaseUrl} reaches a Tidings server (/healthz answered)`));
    } else {
      findings.push(
        warn(
          'public-url',
          `${healthz} answered ${res.status} but not as Tidings does: PUBLIC_BASE_URL may point at another service`,
        ),
      );
    }
  } catch (err) {
    findings.push(
      warn(
        'public-url',
        `no answer from ${healthz} (${reason(err)}): start the server, or make PUBLIC_BASE_URL the address it is reached at (links and provider callbacks use it)`,
      ),
    );
  }
  return findings;
}

export async function checkEgress(config: Config): Promise<Finding[]> {
  const findings: Finding[] = [];
  try {
    await new Egress(config.webhookAllowedHosts, { timeoutMs: TIMEOUT_MS }).close();
    findings.push(
      config.webhookAllowedHosts.length > 0
        ? warn(
            'egress',
            `WEBHOOK_ALLOWED_HOSTS lets webhook URLs reach ${config.webhookAllowedHosts.join(', ')} (plain http and internal addresses included): meant for development and tests`,
          )
        : ok('egress', 'webhook URLs must be https to public addresses'),
    );
  } catch (err) {
    findings.push(
      fail(
        'egress',
        `WEBHOOK_ALLOWED_HOSTS: ${reason(err)}; give host names, addresses or CIDR ranges, comma-separated`,
      ),
    );
  }
  const providers = [
    { url: config.whatsappGraphUrl, setting: 'TIDINGS_WHATSAPP_GRAPH_URL', who: 'whatsapp_cloud channels' },
    { url: config.twilioApiUrl, setting: 'TIDINGS_TWILIO_API_URL', who: 'twilio voice channels' },
  ];
  for (const p of providers) {
    const u = new URL(p.url);
    const port = Number(u.port || (u.protocol === 'https:' ? 443 : 80));
    const host = u.hostname.replace(/^\[|\]$/g, '');
    try {
      await within(TIMEOUT_MS, `connect to ${host}:${port}`, () => tcpConnect(host, port));
      findings.push(ok('egress', `reaches ${host}:${port} (${p.who})`));
    } catch (err) {
      findings.push(
        warn(
          'egress',
          `cannot reach ${host}:${port} (${reason(err)}): ${p.who} cannot send; open egress to it, or set ${p.setting} (sandbox channels need neither)`,
        ),
      );
    }
  }
  return findings;
}

function tcpConnect(host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve();
    });
    socket.once('error', (err) => {
      socket.destroy();
      reject(err);
    });
    socket.setTimeout(TIMEOUT_MS, () => socket.destroy(new Error('timed out')));
  });
}
