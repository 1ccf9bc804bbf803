// `tidings webhooks listen --forward-to http://localhost:4000/hook`: like `stripe listen`, reads the
// account's events from GET /events/stream (server-sent events over the account's key) and POSTs
// each to a local URL, signed (Standard Webhooks) with a secret it prints, so local development
// needs neither a public URL nor WEBHOOK_ALLOWED_HOSTS. After a dropped connection it reconnects
// with Last-Event-ID and misses nothing; events from before it started are sent only when asked
// (--since). One line per event says what the local receiver answered; a failed forward is not
// retried (the server's webhooks and POST /webhooks/{id}/replay are for that).
import { Command } from 'commander';
import { generateSecret, secretProblem, signatureHeaders } from '../../modules/webhooks/index.ts';
import { withConnectionOptions } from '../api/command.ts';
import { API_PREFIX, apiBase, refusalOf, transportFor } from '../api-client.ts';
import { type Connection, resolveConnection, saveProfile } from '../profiles.ts';
import {
  readEventStream,
  type SseMessage,
  TidingsConnectionError,
  TidingsError,
  type Transport,
} from '../sdk.ts';
import { UsageError } from '../usage-error.ts';

export interface ListenOptions {
  /** The server, e.g. http://localhost:3000 (the API prefix is added when missing). */
  baseUrl: string;
  apiKey: string;
  /** For a partner key: the account whose events to forward. */
  accountId?: string;
  forwardTo: string;
  /** Replay from an event id or a time before going live. */
  since?: string;
  /** Comma-separated event filters. */
  events?: string;
  secret: string;
  out: { write(text: string): unknown };
  signal: AbortSignal;
  /** How long the local receiver has to answer. */
  forwardTimeoutMs?: number;
}

const MAX_BACKOFF_MS = 30_000;

const stamp = () => new Date().toISOString().slice(11, 19);

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done);
  });

/** Opens the stream (resuming after `lastEventId`): its body, or the answer that was not one, thrown. */
async function openStream(
  transport: Transport,
  o: ListenOptions,
  lastEventId: string | null,
): Promise<ReadableStream<Uint8Array>> {
  const res = await transport.open(`${API_PREFIX}/events/stream`, {
    accept: 'text/event-stream',
    query: { types: o.events || undefined, since: o.since && !lastEventId ? o.since : undefined },
    headers: lastEventId ? { 'last-event-id': lastEventId } : {},
    signal: o.signal,
  });
  // A success without a body (a 204) is no stream either.
  if (!res.body) throw TidingsError.fromResponse(res, null);
  return res.body;
}

/** Signs and POSTs one event to the local URL; answers the line to print. */
async function forward(o: ListenOptions, data: string, message: SseMessage): Promise<string> {
  let event: { id?: string; type?: string };
  try {
    event = JSON.parse(data);
  } catch {
    return `${stamp()}  skipped a message that is not JSON`;
  }
  const id = event.id ?? message.id ?? '';
  const head = `${stamp()}  ${event.type ?? message.event ?? null}  ${id}`;
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'Tidings-CLI-listen/1.0',
    ...signatureHeaders([o.secret], id, Math.floor(Date.now() / 1000), data),
  };
  try {
    const res = await fetch(o.forwardTo, {
      method: 'POST',
      headers,
      body: data,
      redirect: 'manual',
      signal: AbortSignal.any([o.signal, AbortSignal.timeout(o.forwardTimeoutMs ?? 10_000)]),
    });
    await res.body?.cancel();
    return `${head}  → ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`;
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code;
    return `${head}  → failed: ${cause ?? (err as Error).message}`;
  }
}

/** Runs until the signal aborts; answers the exit code (1: refused by the server, 2: bad input). */
export async function listen(o: ListenOptions): Promise<number> {
  const base = apiBase(o.baseUrl);
  const transport = transportFor(o);
  o.out.write(`Your webhook signing secret is ${o.secret}\n`);
  let lastEventId: string | null = null;
  let ready = false;
  let retryMs = 2000;
  let failures = 0;
  while (!o.signal.aborted) {
    try {
      let body: ReadableStream<Uint8Array>;
      try {
        body = await openStream(transport, o, lastEventId);
      } catch (err) {
        // No answer (or stopped by the signal): tried again below.
        if (!(err instanceof TidingsError) || err instanceof TidingsConnectionError) throw err;
        const why = `${err.status} ${refusalOf(err).describe()}`;
        // A limit or an unavailable server passes; a refused key or a bad option does not.
        if (err.status !== 429 && err.status < 500) {
          o.out.write(`The server refused the stream: ${why}\n`);
          return err.status === 400 ? 2 : 1;
        }
        throw new Error(why);
      }
      if (!ready) o.out.write(`Ready: forwarding events of ${base} to ${o.forwardTo} (Ctrl-C to stop)\n`);
      else if (failures > 0) o.out.write(`${stamp()}  reconnected\n`);
      ready = true;
      failures = 0;
      const onRetry = (ms: number) => {
        retryMs = ms;
      };
      for await (const message of readEventStream(body, onRetry)) {
        if (message.id) lastEventId = message.id;
        // An `id:` alone only moves the position: a message with data is an event to forward.
        if (message.data !== undefined) o.out.write(`${await forward(o, message.data, message)}\n`);
      }
      if (o.signal.aborted) break;
      o.out.write(`${stamp()}  the stream ended; reconnecting\n`);
      await sleep(retryMs, o.signal);
    } catch (err) {
      if (o.signal.aborted) break;
      failures++;
      const wait = Math.min(MAX_BACKOFF_MS, retryMs * 2 ** Math.min(failures - 1, 4));
      const lost = err instanceof TidingsConnectionError ? err.cause : err;
      const cause = (lost as { cause?: { code?: string } }).cause?.code;
      o.out.write(
        `${stamp()}  cannot reach ${base} (${cause ?? (lost as Error).message}); retrying in ${Math.round(wait / 1000)} s\n`,
      );
      await sleep(wait, o.signal);
    }
  }
  return 0;
}

interface CommandOptions {
  forwardTo: string;
  url?: string;
  key?: string;
  account?: string;
  profile?: string;
  since?: string;
  events?: string;
  secret?: string;
}

/**
 * The secret to sign with: --secret, else the one kept in the profile, else a new one, kept in the
 * profile (when one is in use) so the receiver's configured secret stays valid from run to run.
 */
function signingSecret(opts: CommandOptions, connection: Connection): string {
  if (opts.secret) {
    const problem = secretProblem(opts.secret);
    if (problem) throw new UsageError(`--secret ${problem}`);
    return opts.secret;
  }
  const { profile, profileName } = connection;
  if (profile?.webhookSecret && !secretProblem(profile.webhookSecret)) return profile.webhookSecret;
  const secret = generateSecret();
  if (profile && profileName)
    saveProfile(connection.path, profileName, { ...profile, webhookSecret: secret });
  return secret;
}

export function webhooksListenCommand(): Command {
  return withConnectionOptions(
    new Command('listen')
      .description("forward the account's events, signed, to a local URL (no public URL needed)")
      .requiredOption('--forward-to <url>', 'where each event is POSTed, e.g. http://localhost:4000/hook'),
  )
    .option('--since <id|time>', 'first forward the events after this event id, or since this time')
    .option('--events <types>', 'only these events: comma-separated types or families (message.*)')
    .option(
      '--secret <whsec>',
      'sign with this secret (default: the one kept in the profile, or a new one, printed)',
    )
    .exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : 2))
    .action(async (opts: CommandOptions) => {
      let connection: Connection;
      let secret: string;
      try {
        if (!URL.canParse(opts.forwardTo))
          throw new UsageError(`--forward-to is not a URL: ${opts.forwardTo}`);
        connection = resolveConnection(opts);
        secret = signingSecret(opts, connection);
      } catch (err) {
        if (!(err instanceof UsageError)) throw err;
        process.stderr.write(`tidings webhooks listen: ${err.message}\n`);
        process.exit(2);
      }
      const abort = new AbortController();
      process.once('SIGINT', () => abort.abort());
      process.once('SIGTERM', () => abort.abort());
      process.exitCode = await listen({
        baseUrl: connection.baseUrl,
        apiKey: connection.apiKey,
        accountId: connection.accountId ?? undefined,
        forwardTo: opts.forwardTo,
        since: opts.since,
        events: opts.events,
        secret,
        out: process.stdout,
        signal: abort.signal,
      });
    });
}
