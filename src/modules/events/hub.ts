// The open event streams of an app (one process): ended when the app closes, and within a second
// when their caller loses access: a key revoked or expired, a console session signed out, expired,
// idle past its limit, or whose member was removed or given another role, an account no longer
// ACTIVE, whichever process made the change.
//
// One check every CHECK_MS for all the process's open streams, from the database: a statement for
// their keys, one for their sessions and one for their accounts (`= ANY` over the distinct ids),
// whatever the number of streams; nothing at all while none is open. A check per stream would be a
// statement per stream each time; a notification (LISTEN/NOTIFY) would need every path that ends
// access to send one, and still a poll for expiry and for notifications lost with a connection.
// Until a stream's caller is verified again it sends nothing created after its last verification
// (EventStream's `verified`), so an event created after a revocation is never sent, however slow
// the check.
import type { FastifyBaseLogger } from 'fastify';
import type { Authenticator } from '../../kernel/access/auth.ts';
import type { ConsoleRole, ConsoleSessions } from '../../kernel/access/console-principal.ts';
import type { EventStream } from './stream.ts';

/** How often the open streams' callers are checked (an ended access stops them within a second). */
export const CHECK_MS = 250;

/** Who a stream sends to: its key, or its console session (with the role it was opened with). */
export type StreamCaller =
  | { kind: 'key'; keyId: string; accountId: string }
  | { kind: 'session'; sessionId: string; role: ConsoleRole; accountId: string };

/** The wall-clock time (ms) the stream's caller was last found allowed; set by the hub. */
export interface Verified {
  at: number;
}

interface Watched {
  caller: StreamCaller;
  verified: Verified;
}

export interface HubDeps {
  auth: Authenticator;
  sessions: ConsoleSessions;
  /** The clock keys and sessions expire by (tests move it). */
  now: () => Date;
  log: FastifyBaseLogger;
}

export class StreamHub {
  readonly #deps: HubDeps;
  readonly #open = new Map<EventStream, Watched | null>();
  #timer: NodeJS.Timeout | null = null;
  #checking: Promise<void> | null = null;
  #closed = false;

  constructor(deps: HubDeps) {
    this.#deps = deps;
  }

  /** Holds a stream until it ends; a stream with a caller is checked until then. */
  add(stream: EventStream, watched?: Watched): void {
    this.#open.set(stream, watched ?? null);
    void stream.done.finally(() => this.#open.delete(stream));
    if (watched) this.#schedule();
  }

  get size(): number {
    return this.#open.size;
  }

  async closeAll(): Promise<void> {
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    const streams = [...this.#open.keys()];
    for (const s of streams) s.stop();
    await Promise.allSettled([...streams.map((s) => s.done), this.#checking]);
  }

  #schedule(): void {
    if (this.#timer || this.#checking || this.#closed) return;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.#checking = this.#check()
        .catch((err) => this.#deps.log.warn({ err }, 'event stream access check failed'))
        .finally(() => {
          this.#checking = null;
          if ([...this.#open.values()].some((w) => w !== null)) this.#schedule();
        });
    }, CHECK_MS);
    // An open stream holds its socket; the check alone must not keep a process up.
    this.#timer.unref();
  }

  /** Stops every stream whose caller lost access, and marks the others verified as of now. */
  async #check(): Promise<void> {
    const watched = [...this.#open].filter((e): e is [EventStream, Watched] => e[1] !== null);
    if (watched.length === 0) return;
    const startedAt = Date.now();
    const now = this.#deps.now();
    const distinct = (pick: (c: StreamCaller) => string | null) => [
      ...new Set(watched.map(([, w]) => pick(w.caller)).filter((id): id is string => id !== null)),
    ];
    const keyIds = distinct((c) => (c.kind === 'key' ? c.keyId : null));
    const sessionIds = distinct((c) => (c.kind === 'session' ? c.sessionId : null));
    const [keys, roles, accounts] = await Promise.all([
      keyIds.length > 0 ? this.#deps.auth.liveKeys(keyIds, now) : new Set<string>(),
      sessionIds.length > 0 ? this.#deps.sessions.liveRoles(sessionIds, now) : new Map<string, ConsoleRole>(),
      this.#deps.auth.activeAccounts(distinct((c) => c.accountId)),
    ]);
    for (const [stream, { caller, verified }] of watched) {
      const allowed =
        accounts.has(caller.accountId) &&
        (caller.kind === 'key' ? keys.has(caller.keyId) : roles.get(caller.sessionId) === caller.role);
      // The client's reconnection gets the refusal (401, 403), or a stream of its new role.
      if (allowed) verified.at = startedAt;
      else stream.stop();
    }
  }
}
