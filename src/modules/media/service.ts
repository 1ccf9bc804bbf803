// Media of an account (docs/messaging.md § Media): files uploaded through POST /media, and files
// customers sent, fetched from the provider. The bytes are kept in the database in chunks
// (media_chunks), so any process can stream them.
//
// - An upload through a live key of an account on the WhatsApp Cloud API is also given to Meta
//   first (POST /{phone-number-id}/media): Meta refusing it, or unreachable, stores nothing. A
//   sandbox key's upload, or one on the sandbox channel, is kept here only.
// - A send naming `med_…` goes to Meta by Meta's id, uploaded at dispatch when there is none yet or
//   Meta's copy is older than 29 days (Meta keeps uploads 30).
// - A customer's file is fetched by a job as it arrives (GET /{media-id} → its URL → the bytes with
//   the channel's token), or on demand when it is asked for first.
// - Everything is deleted TIDINGS_MEDIA_RETENTION_DAYS after it was stored, by an hourly prune.
import type { FastifyBaseLogger } from 'fastify';
import { ChannelNotConfigured, type Channels, providerFor, type SendMode } from '../../channels/registry.ts';
import type { ChannelConfig } from '../../channels/settings.ts';
import type { InboundContent, MessageContent, Provider, SendOutcome } from '../../channels/types.ts';
import type { Database, Sql } from '../../kernel/database/db.ts';
import { ApiError, conflict, notFound } from '../../kernel/http/errors.ts';
import type { JobDefinition, Jobs } from '../../kernel/jobs/jobs.ts';
import { newId } from '../../kernel/values/ids.ts';
import { loadChannel } from '../whatsapp-channel/index.ts';
import { ChunkedFile } from './chunks.ts';
import { defaultFilename, LARGEST_MEDIA_BYTES, type StoredMediaKind } from './kinds.ts';
import {
  deleteExpired,
  deleteMedia,
  findMedia,
  findMediaOfMessage,
  insertMedia,
  type MediaRow,
  noteProviderCopy,
  readChunks,
} from './repo.ts';
import type { ReceivedFile } from './upload.ts';

export const FETCH_INBOUND_MEDIA_JOB = 'media.fetch-inbound';

/** Meta keeps an upload 30 days; a copy older than this is uploaded again before a send. */
const PROVIDER_COPY_DAYS = 29;
const DAY_MS = 24 * 3600 * 1000;
const PRUNE_EVERY_MS = 3600_000;
const PRUNE_BATCH = 50;

/** What the store reads of a message: its file, and whose it is. */
export interface MessageOfMedia {
  id: string;
  account_id: string;
  direction: 'outbound' | 'inbound';
  /** The message as stored (messages.content): its `media`, if any, is what the store reads. */
  content: object;
  provider: Provider;
  created_at: Date;
}

export interface MediaDeps {
  db: Database;
  /** A message of the account, or null (modules/messages' `findMessage`, given in app.ts). */
  findMessage: (sql: Sql, accountId: string, messageId: string) => Promise<MessageOfMedia | null>;
  jobs: Jobs;
  channels: Channels;
  now: () => Date;
  log: FastifyBaseLogger;
  retentionDays: number;
}

export interface FetchInboundJob {
  accountId: string;
  messageId: string;
}

/** A stored file ready to stream: its row and its bytes. */
export interface MediaContent {
  row: MediaRow;
  body: AsyncIterable<Buffer>;
}

const providerUnavailable = (message: string) =>
  new ApiError('SERVICE_UNAVAILABLE', `${message}; nothing was stored. Retry shortly.`, {
    headers: { 'retry-after': '5' },
  });

const gone = (message: string) => new ApiError('MEDIA_GONE', message);

export class MediaStore {
  readonly #d: MediaDeps;
  #pruneTimer: NodeJS.Timeout | null = null;
  #pruning: Promise<unknown> | null = null;

  constructor(deps: MediaDeps) {
    this.#d = deps;
  }

  /** A row whose bytes are here and still kept. */
  #usable(row: MediaRow | null): row is MediaRow {
    return row !== null && row.status === 'ready' && row.expires_at.getTime() > this.#d.now().getTime();
  }

  #expiresAt(now: Date): Date {
    return new Date(now.getTime() + this.#d.retentionDays * DAY_MS);
  }

  // ---- Uploads ----

  /** Stores an upload (after giving it to Meta, on a live WhatsApp channel); see the top of the file. */
  async upload(accountId: string, mode: SendMode, file: ReceivedFile): Promise<MediaRow> {
    const id = newId('media');
    const filename = file.filename ?? defaultFilename(id, file.mimeType);
    const channel = await loadChannel(this.#d.db, accountId);
    let copy: { provider: Provider; providerMediaId: string; uploadedAt: Date } | null = null;
    if (providerFor(channel.provider, mode) === 'whatsapp_cloud') {
      copy = await this.#giveToMeta(channel, {
        chunks: file.chunks,
        sizeBytes: file.sizeBytes,
        mimeType: file.mimeType,
        filename,
      });
    }
    const now = this.#d.now();
    return this.#d.db.transaction(
      async (tx) =>
        (await insertMedia(
          tx,
          {
            id,
            account_id: accountId,
            direction: 'uploaded',
            kind: file.kind,
            mime_type: file.mimeType,
            size_bytes: file.sizeBytes,
            sha256: file.sha256,
            filename,
            provider: copy?.provider ?? null,
            provider_media_id: copy?.providerMediaId ?? null,
            provider_uploaded_at: copy?.uploadedAt ?? null,
            message_id: null,
            status: 'ready',
            error: null,
            expires_at: this.#expiresAt(now),
          },
          file.chunks,
          now,
        ))!,
    );
  }

  async #giveToMeta(
    channel: ChannelConfig,
    file: Parameters<ReturnType<Channels['whatsappMedia']>['upload']>[0],
  ): Promise<{ provider: Provider; providerMediaId: string; uploadedAt: Date }> {
    let media: ReturnType<Channels['whatsappMedia']>;
    try {
      media = this.#d.channels.whatsappMedia(channel);
    } catch (err) {
      if (!(err instanceof ChannelNotConfigured)) throw err;
      throw conflict(`The account's channel cannot take uploads: ${err.message}.`);
    }
    const uploadedAt = this.#d.now();
    const answer = await media.upload(file);
    if (answer.ok) return { provider: 'whatsapp_cloud', providerMediaId: answer.id, uploadedAt };
    if (answer.retry)
      throw providerUnavailable(
        `The WhatsApp Cloud API could not take the file now (${answer.error.message})`,
      );
    throw conflict(`The WhatsApp Cloud API refused the file (${answer.error.message}); nothing was stored.`, [
      { field: 'file', issue: answer.error.message },
    ]);
  }

  /** The account's media, while it is kept (an expired one is gone even before the prune runs). */
  async get(accountId: string, id: string): Promise<MediaRow> {
    const row = await findMedia(this.#d.db, accountId, id);
    if (!row || row.expires_at.getTime() <= this.#d.now().getTime()) throw notFound('media');
    return row;
  }

  async content(accountId: string, id: string): Promise<MediaContent> {
    const row = await this.get(accountId, id);
    if (row.status !== 'ready') throw notFound('media');
    return { row, body: readChunks(this.#d.db, row.id) };
  }

  /** Deletes the media here, and Meta's copy (best effort: Meta deletes it after 30 days anyway). */
  async remove(accountId: string, id: string): Promise<void> {
    const row = await deleteMedia(this.#d.db, accountId, id);
    if (!row) throw notFound('media');
    await this.#forgetAtMeta(row);
  }

  async #forgetAtMeta(row: Pick<MediaRow, 'account_id' | 'provider' | 'provider_media_id' | 'direction'>) {
    // A customer's file is Meta's own; only our uploads are ours to delete there.
    if (row.direction !== 'uploaded' || row.provider !== 'whatsapp_cloud' || !row.provider_media_id) return;
    try {
      const channel = await loadChannel(this.#d.db, row.account_id);
      if (channel.provider !== 'whatsapp_cloud') return;
      await this.#d.channels.whatsappMedia(channel).remove(row.provider_media_id);
    } catch (err) {
      this.#d.log.warn({ err: String(err) }, "could not delete Meta's copy of a media file");
    }
  }

  // ---- Sending by id ----

  /** The kind and filename of the account's media `id` a send names, or null when it is not there (unknown, deleted or expired). */
  async forSend(
    accountId: string,
    id: string,
  ): Promise<{ kind: StoredMediaKind; filename: string | null } | null> {
    const row = await findMedia(this.#d.db, accountId, id);
    if (!this.#usable(row)) return null;
    return { kind: row.kind, filename: row.filename };
  }

  /**
   * Gives a send by `med_…` id Meta's id for the file, uploading it first when Meta has no fresh
   * copy. Answers the content to send, or the outcome of a send that cannot go.
   */
  async withProviderMedia(
    accountId: string,
    channel: ChannelConfig,
    content: MessageContent,
  ): Promise<MessageContent | SendOutcome> {
    if (content.type !== 'media' || !content.media.mediaId) return content;
    const row = await findMedia(this.#d.db, accountId, content.media.mediaId);
    if (!this.#usable(row)) {
      return {
        kind: 'rejected',
        error: {
          code: 'MEDIA_NOT_AVAILABLE',
          message: `The media ${content.media.mediaId} was deleted or expired before the message was sent.`,
          providerCode: null,
        },
      };
    }
    const fresh =
      row.provider === 'whatsapp_cloud' &&
      row.provider_media_id &&
      row.provider_uploaded_at &&
      this.#d.now().getTime() - row.provider_uploaded_at.getTime() < PROVIDER_COPY_DAYS * DAY_MS;
    let providerMediaId = fresh ? row.provider_media_id! : null;
    if (!providerMediaId) {
      const uploadedAt = this.#d.now();
      const answer = await this.#d.channels.whatsappMedia(channel).upload({
        chunks: readChunks(this.#d.db, row.id),
        sizeBytes: row.size_bytes ?? 0,
        mimeType: row.mime_type ?? 'application/octet-stream',
        filename: row.filename ?? defaultFilename(row.id, row.mime_type),
      });
      if (!answer.ok) {
        return answer.retry
          ? { kind: 'retry', error: answer.error }
          : { kind: 'rejected', error: answer.error };
      }
      providerMediaId = answer.id;
      await noteProviderCopy(this.#d.db, row.id, {
        provider: 'whatsapp_cloud',
        providerMediaId,
        uploadedAt,
      });
    }
    return { ...content, media: { ...content.media, providerMediaId } };
  }

  // ---- Customers' files ----

  /** The job that fetches a customer's file as it arrives. */
  fetchJob(): JobDefinition<FetchInboundJob> {
    return {
      name: FETCH_INBOUND_MEDIA_JOB,
      retryLimit: 5,
      retryDelaySeconds: 5,
      expireInSeconds: 15 * 60,
      handle: async ({ accountId, messageId }) => {
        await this.#fetchInbound(accountId, messageId);
      },
    };
  }

  /** Enqueues the fetch of the files of newly stored inbound messages (none for the sandbox's). */
  async fetchLater(
    messages: Pick<MessageOfMedia, 'id' | 'account_id' | 'content' | 'provider'>[],
  ): Promise<void> {
    const jobs = messages
      .filter((m) => m.provider === 'whatsapp_cloud' && inboundMediaOf(m) !== null)
      .map((m) => ({ data: { accountId: m.account_id, messageId: m.id } satisfies FetchInboundJob }));
    if (jobs.length > 0) await this.#d.jobs.enqueueMany(this.#d.db, FETCH_INBOUND_MEDIA_JOB, jobs);
  }

  /**
   * The file of a message: a customer's (fetched now if it was not yet), or the upload one of ours
   * was sent with. 404 for a message with no file; 410 for one the provider no longer has.
   */
  async ofMessage(accountId: string, messageId: string): Promise<MediaContent> {
    const message = await this.#d.findMessage(this.#d.db, accountId, messageId);
    if (!message) throw notFound('message');
    const noMedia = () =>
      new ApiError('RESOURCE_NOT_FOUND', `Message ${messageId} carries no file.`, {
        details: [{ field: 'id', issue: 'is a message without media' }],
      });
    if (message.direction === 'outbound') {
      const sent = (message.content as { media?: { id?: string } }).media;
      if (!sent?.id) throw noMedia();
      const row = await findMedia(this.#d.db, accountId, sent.id);
      if (!row || row.expires_at.getTime() <= this.#d.now().getTime())
        throw gone(`The file message ${messageId} was sent with (${sent.id}) has been deleted.`);
      return { row, body: readChunks(this.#d.db, row.id) };
    }
    if (!inboundMediaOf(message)) throw noMedia();
    let row = await findMediaOfMessage(this.#d.db, accountId, messageId);
    if (!row || row.status === 'pending')
      row = await this.#fetchInbound(accountId, messageId, { onDemand: true });
    if (!row || row.expires_at.getTime() <= this.#d.now().getTime())
      throw gone(`The file of message ${messageId} is no longer kept.`);
    if (row.status !== 'ready')
      throw gone(`The file of message ${messageId} cannot be had: ${row.error ?? 'unknown'}.`);
    return { row, body: readChunks(this.#d.db, row.id) };
  }

  /**
   * Fetches a customer's file into the database (once: a fetch that finds it there already, or
   * that races another, keeps the first). A passing failure throws (the job retries; on demand,
   * 503); the provider no longer having the file is recorded as failed.
   */
  async #fetchInbound(
    accountId: string,
    messageId: string,
    options: { onDemand?: boolean } = {},
  ): Promise<MediaRow | null> {
    const existing = await findMediaOfMessage(this.#d.db, accountId, messageId);
    if (existing && existing.status !== 'pending') return existing;
    const message = await this.#d.findMessage(this.#d.db, accountId, messageId);
    const media = message ? inboundMediaOf(message) : null;
    if (!message || !media) return null;
    const now = this.#d.now();
    const base = {
      account_id: accountId,
      direction: 'inbound' as const,
      kind: media.kind,
      filename: media.filename,
      provider: message.provider,
      provider_media_id: media.id,
      provider_uploaded_at: null,
      message_id: messageId,
      // Kept as long as anything else received then.
      expires_at: this.#expiresAt(message.created_at),
    };
    const record = async (row: Omit<MediaRow, 'created_at' | keyof typeof base | 'id'>, chunks: Buffer[]) =>
      (await this.#d.db.transaction((tx) =>
        insertMedia(tx, { id: newId('media'), ...base, ...row }, chunks, now),
      )) ?? findMediaOfMessage(this.#d.db, accountId, messageId);
    const failed = (error: string) =>
      record({ mime_type: media.mimeType, size_bytes: null, sha256: null, status: 'failed', error }, []);

    if (message.provider !== 'whatsapp_cloud') {
      // A sandbox customer sends one of the account's uploads (POST /sandbox/inbound-messages
      // with media.id), copied as it is; without one, no file exists.
      const copied = media.id.startsWith('med_')
        ? await this.#copyUpload(media.id, { id: newId('media'), ...base }, now)
        : null;
      return copied ?? failed('the simulated customer sent no file (give media.id, an upload, to send one)');
    }
    const channel = await loadChannel(this.#d.db, accountId);
    let client: ReturnType<Channels['whatsappMedia']>;
    try {
      client = this.#d.channels.whatsappMedia(channel);
    } catch (err) {
      if (!(err instanceof ChannelNotConfigured)) throw err;
      return failed(err.message);
    }
    const unavailable = (why: string) =>
      options.onDemand
        ? new ApiError(
            'SERVICE_UNAVAILABLE',
            `The file could not be fetched from WhatsApp now (${why}); retry shortly.`,
            {
              headers: { 'retry-after': '5' },
            },
          )
        : new Error(`media of ${messageId} not fetched: ${why}`);
    // Only Meta no longer having the file is final; anything else (Meta down, a token refused
    // until it is fixed, a download URL that expired) is tried again.
    const info = await client.info(media.id);
    if (!info.ok) {
      if (info.gone) return failed(`WhatsApp no longer has it (${info.error.message})`);
      throw unavailable(info.error.message);
    }
    const download = await client.download(info.url);
    if (!download.ok) throw unavailable(download.error.message);
    const file = new ChunkedFile();
    try {
      for await (const data of download.body) {
        if (file.sizeBytes + data.length > LARGEST_MEDIA_BYTES)
          throw new Error(`the file is larger than ${LARGEST_MEDIA_BYTES} bytes`);
        file.add(data);
      }
    } catch (err) {
      throw unavailable(`the download failed: ${String((err as Error).message ?? err)}`);
    }
    const sha256 = file.finish();
    if (!sameHash(info.sha256, sha256))
      throw unavailable('the bytes did not match the SHA-256 WhatsApp gave');
    return record(
      {
        mime_type: info.mimeType ?? download.mimeType ?? media.mimeType,
        size_bytes: file.sizeBytes,
        sha256,
        status: 'ready',
        error: null,
      },
      file.chunks,
    );
  }

  /** A copy of an upload of the account (its chunks too) as this inbound row; null when the upload is gone. */
  async #copyUpload(
    uploadId: string,
    row: Omit<MediaRow, 'created_at' | 'mime_type' | 'size_bytes' | 'sha256' | 'status' | 'error'>,
    now: Date,
  ): Promise<MediaRow | null> {
    const upload = await findMedia(this.#d.db, row.account_id, uploadId);
    if (!this.#usable(upload)) return null;
    return this.#d.db.transaction(async (tx) => {
      const inserted = await insertMedia(
        tx,
        {
          ...row,
          mime_type: upload.mime_type,
          size_bytes: upload.size_bytes,
          sha256: upload.sha256,
          status: 'ready',
          error: null,
        },
        [],
        now,
      );
      if (!inserted) return findMediaOfMessage(tx, row.account_id, row.message_id!);
      await tx.query(
        'INSERT INTO media_chunks (media_id, seq, bytes) SELECT $1, seq, bytes FROM media_chunks WHERE media_id = $2',
        [inserted.id, upload.id],
      );
      return inserted;
    });
  }

  // ---- Retention ----

  /** Starts the hourly prune in this process (one that runs workers). */
  start(): void {
    if (this.#pruneTimer) return;
    this.#pruneTimer = setInterval(() => void this.prune(), PRUNE_EVERY_MS);
    this.#pruneTimer.unref();
  }

  async stop(): Promise<void> {
    if (this.#pruneTimer) clearInterval(this.#pruneTimer);
    this.#pruneTimer = null;
    await this.#pruning?.catch(() => {});
  }

  /** Deletes media past its retention, in batches; answers how many. */
  async prune(): Promise<number> {
    const run = (async () => {
      let total = 0;
      for (;;) {
        const deleted = await deleteExpired(this.#d.db, this.#d.now(), PRUNE_BATCH);
        total += deleted.length;
        for (const row of deleted) await this.#forgetAtMeta(row);
        if (deleted.length < PRUNE_BATCH) break;
      }
      if (total > 0) this.#d.log.info({ media: total }, 'pruned expired media');
      return total;
    })();
    this.#pruning = run;
    try {
      return await run;
    } catch (err) {
      this.#d.log.warn({ err: String(err) }, 'media prune failed; the next one tries again');
      return 0;
    }
  }
}

/**
 * Whether Meta's SHA-256 of a file is ours. Only a hex digest is compared: a value in another form
 * (or none) is not a reason to refuse the file.
 */
function sameHash(theirs: string | null, oursHex: string): boolean {
  return !theirs || !/^[0-9a-f]{64}$/i.test(theirs) || theirs.toLowerCase() === oursHex;
}

/** The customer's file a message carries, if any. */
export function inboundMediaOf(
  message: Pick<MessageOfMedia, 'content'>,
): Extract<InboundContent, { media: unknown }>['media'] | null {
  const c = message.content as Partial<Extract<InboundContent, { media: unknown }>>;
  return c.media && typeof c.media.id === 'string' ? c.media : null;
}
