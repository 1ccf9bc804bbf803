// Outbound HTTP to addresses our users give us (webhook URLs), made safe against SSRF: a URL must
// use https and may only reach public unicast addresses, unless WEBHOOK_ALLOWED_HOSTS lets its host
// or address through (local development, tests). The check runs when a URL is saved and again on
// every connection, inside the DNS lookup the socket connects with, so the address that was checked
// is the address that is used and DNS rebinding cannot swap in an internal one.
import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { Agent, request } from 'undici';
import { describeRequestFailure, parseRetryAfter, readLimited } from './http-answers.ts';

/** Resolves a host name to its addresses (the system resolver unless a test gives another). */
export type Resolver = (hostname: string) => Promise<string[]>;

export const systemResolver: Resolver = async (hostname) =>
  (await dnsLookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** The setting (src/config.ts) whose hosts and ranges the check lets through; refusals name it. */
export const ALLOW_SETTING = 'WEBHOOK_ALLOWED_HOSTS';

export class EgressRefused extends Error {
  override name = 'EgressRefused';
}

export interface PostResult {
  statusCode: number | null;
  /** The start of the response body, as text. */
  excerpt: string | null;
  error: string | null;
  /** A Retry-After header's wait in seconds, when the answer carried one. */
  retryAfterSeconds: number | null;
  latencyMs: number;
}

const EXCERPT_BYTES = 1024;
// More than this of a response is not read; the connection is dropped instead.

function bare(hostname: string): string {
  return hostname.replace(/^\[|\]$/g, '').toLowerCase();
}

function normalise(ip: Address): Address {
  return ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()
    ? (ip as ipaddr.IPv6).toIPv4Address()
    : ip;
}

export class Egress {
  readonly #hosts = new Set<string>();
  readonly #ranges: [Address, number][] = [];
  readonly #resolve: Resolver;
  readonly #timeoutMs: number;
  readonly #agent: Agent;

  /** `allowed`: host names, addresses or CIDR ranges let through (WEBHOOK_ALLOWED_HOSTS). */
  constructor(allowed: string[], options: { resolver?: Resolver; timeoutMs: number }) {
    for (const entry of allowed) {
      const item = bare(entry);
      if (item.includes('/')) this.#ranges.push(ipaddr.parseCIDR(item));
      else if (ipaddr.isValid(item)) {
        const ip = normalise(ipaddr.parse(item));
        this.#ranges.push([ip, ip.kind() === 'ipv4' ? 32 : 128]);
      } else this.#hosts.add(item);
    }
    this.#resolve = options.resolver ?? systemResolver;
    this.#timeoutMs = options.timeoutMs;
    this.#agent = new Agent({
      connect: { lookup: this.#lookup, timeout: options.timeoutMs },
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      keepAliveTimeout: 10_000,
    });
  }

  /** Whether the allow-list covers the address (then any range and plain http are fine). */
  #allowedAddress(ip: Address): boolean {
    return this.#ranges.some(([base, bits]) => base.kind() === ip.kind() && ip.match(base, bits));
  }

  /** Why this address may not be reached, or null when it may. */
  addressProblem(address: string): string | null {
    if (!ipaddr.isValid(address)) return `${address} is not an IP address`;
    const ip = normalise(ipaddr.parse(address));
    if (this.#allowedAddress(ip)) return null;
    const range = ip.range();
    if (range !== 'unicast') return `${address} is a ${range} address`;
    // The deprecated IPv4-compatible form (::a.b.c.d) is "unicast" to ipaddr.js; some stacks
    // route it to the IPv4 address it embeds.
    if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).parts.slice(0, 6).every((p) => p === 0)) {
      return `${address} is an IPv4-compatible address`;
    }
    return null;
  }

  /** Why a host with these addresses may not be reached (any one refused refuses it), or null. */
  #refusal(host: string, addresses: string[]): string | null {
    if (this.#hosts.has(host)) return null;
    for (const address of addresses) {
      const problem = this.addressProblem(address);
      if (problem) return `${host} resolves to ${problem}`;
    }
    return null;
  }

  /** Checks a URL before it is saved; answers why it is refused, or null when it is fine. */
  async check(raw: string): Promise<string | null> {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return 'is not an absolute URL';
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must use https';
    if (url.username || url.password) return 'must not contain credentials';
    const host = bare(url.hostname);
    if (this.#hosts.has(host)) return null;
    let addresses: string[];
    try {
      addresses = ipaddr.isValid(host) ? [host] : await this.#resolve(host);
    } catch {
      addresses = [];
    }
    if (addresses.length === 0) return `host ${host} does not resolve`;
    const refused = addresses.find((a) => this.addressProblem(a));
    if (refused) return `is refused: ${this.#explain(host, refused)}`;
    const allAllowed = addresses.every((a) => this.#allowedAddress(normalise(ipaddr.parse(a))));
    if (url.protocol === 'http:' && !allAllowed) {
      return `must use https (plain http is let through only to hosts listed in ${ALLOW_SETTING})`;
    }
    return null;
  }

  // A refusal a newcomer can act on: what the address is, and the setting that lets it through
  // (the usual case is a receiver on localhost during development).
  #explain(host: string, address: string): string {
    const ip = normalise(ipaddr.parse(address));
    const what = ip.range() === 'unicast' ? 'an IPv4-compatible' : `a ${ip.range()}`;
    const reached = host === address ? address : `${host} resolves to ${address}`;
    return (
      `${reached}, ${what} address, which webhooks may not reach unless the server allows it; ` +
      `to allow it (local development), start the server with ${ALLOW_SETTING}=${host}`
    );
  }

  // The lookup every connection of the agent makes: resolve, refuse if any address is not allowed,
  // and hand the checked addresses to the socket.
  #lookup: LookupFunction = (hostname, options, callback) => {
    const host = bare(hostname);
    this.#resolve(host).then(
      (addresses) => {
        const refused = this.#refusal(host, addresses);
        if (refused) return callback(new EgressRefused(`refused: ${refused}`), '', 4);
        if (addresses.length === 0) return callback(new Error(`host ${host} does not resolve`), '', 4);
        const found = addresses.map((address) => ({
          address,
          family: ipaddr.parse(address).kind() === 'ipv6' ? 6 : 4,
        }));
        if (options.all) return (callback as (e: null, a: typeof found) => void)(null, found);
        return callback(null, found[0]!.address, found[0]!.family);
      },
      (err: Error) => callback(err as NodeJS.ErrnoException, '', 4),
    );
  };

  /**
   * POSTs a body; never throws: every outcome, refusal and failure is in the result. The answer's
   * first `excerptBytes` (1 KB unless given) are kept.
   */
  async post(
    url: string,
    body: string,
    headers: Record<string, string>,
    options: { excerptBytes?: number } = {},
  ): Promise<PostResult> {
    const started = performance.now();
    const done = (result: Omit<PostResult, 'latencyMs'>): PostResult => ({
      ...result,
      latencyMs: Math.round(performance.now() - started),
    });
    const failed = (error: string) =>
      done({ statusCode: null, excerpt: null, error, retryAfterSeconds: null });
    let host: string;
    try {
      const parsed = new URL(url);
      if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')
        return failed('refused: not an http(s) URL');
      host = bare(parsed.hostname);
    } catch {
      return failed('refused: not a URL');
    }
    // A literal address is connected to without a lookup, so it is checked here.
    if (ipaddr.isValid(host) && !this.#hosts.has(host)) {
      const problem = this.addressProblem(host);
      if (problem) return failed(`refused: ${problem}`);
    }
    try {
      const res = await request(url, {
        method: 'POST',
        body,
        headers,
        dispatcher: this.#agent,
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
      const excerpt = await readExcerpt(res.body, options.excerptBytes ?? EXCERPT_BYTES);
      const retryAfter = res.headers['retry-after'];
      return done({
        statusCode: res.statusCode,
        excerpt,
        error: null,
        retryAfterSeconds: parseRetryAfter(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter),
      });
    } catch (err) {
      return failed(describeFailure(err, this.#timeoutMs));
    }
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }
}

async function readExcerpt(body: AsyncIterable<Buffer>, bytes: number): Promise<string | null> {
  // A body cut short still leaves what arrived.
  const read = await readLimited(body, { keepPartial: true });
  return read.length === 0 ? null : read.subarray(0, bytes).toString('utf8');
}

function describeFailure(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; message?: string; cause?: unknown };
  if (e.name === 'EgressRefused') return e.message ?? 'refused';
  const cause = e.cause as { name?: string; message?: string } | undefined;
  if (cause?.name === 'EgressRefused') return cause.message ?? 'refused';
  return describeRequestFailure(err, timeoutMs);
}
