// /media: upload a file (multipart/form-data), read it back, delete it; and /messages/{id}/media, the
// file a message carries (a customer's, fetched from the provider). Multipart parsing is registered
// in this plugin only: every other route still takes JSON alone.
import { Readable } from 'node:stream';
import multipart from '@fastify/multipart';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { accountOf, ON_RESOURCE } from '../../kernel/access/access.ts';
import type { KernelContext } from '../../kernel/context.ts';
import type { ErrorCode } from '../../kernel/http/errors.ts';
import { defaultFilename, LARGEST_MEDIA_BYTES } from './kinds.ts';
import { MediaIdParams, MediaSchema, toMedia, UploadBody } from './schemas.ts';
import type { MediaContent, MediaStore } from './service.ts';
import { MULTIPART_OVERHEAD_BYTES, receiveUpload } from './upload.ts';

/** The kernel's context and the services these routes uses. */
export interface MediaContext extends KernelContext {
  media: MediaStore;
}

const FILE_RESPONSE = {
  description: 'The file: Content-Type its type, Content-Length its size, Content-Disposition its filename.',
  content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
};

/** `attachment; filename="…"` with an ASCII fallback, and the exact name as RFC 5987 `filename*`. */
function disposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

function sendFile(reply: FastifyReply, { row, body }: MediaContent) {
  reply
    .type(row.mime_type ?? 'application/octet-stream')
    .header('content-length', String(row.size_bytes ?? 0))
    .header('content-disposition', disposition(row.filename ?? defaultFilename(row.id, row.mime_type)))
    .header('cache-control', 'private, no-store');
  return reply.send(Readable.from(body));
}

export function mediaRoutes(ctx: MediaContext): FastifyPluginAsyncTypebox {
  const tags = ['media'];
  return async (app) => {
    await app.register(multipart);

    app.post(
      '/media',
      {
        bodyLimit: LARGEST_MEDIA_BYTES + MULTIPART_OVERHEAD_BYTES,
        config: {
          agents: true,
          access: 'account',
          errors: ['CONFLICT', 'SERVICE_UNAVAILABLE'] satisfies ErrorCode[],
        },
        schema: {
          tags,
          operationId: 'uploadMedia',
          summary: 'Upload a file to send by its id',
          description:
            'A `multipart/form-data` body with the file as `file` (its part’s Content-Type is its type) and, optionally, `kind`. The type must be one WhatsApp takes for the kind (400 naming `file` otherwise); a file over its kind’s limit is a 413 naming `file`. With a live key on the WhatsApp Cloud API the file is also uploaded to Meta (a failure there stores nothing: 503 to retry, 409 when Meta refuses it). Send it with `media: {kind, id}`. Kept `TIDINGS_MEDIA_RETENTION_DAYS` (30).',
          consumes: ['multipart/form-data'],
          body: UploadBody,
          response: { 201: MediaSchema },
        },
      },
      async (request, reply) => {
        const file = await receiveUpload(request);
        const row = await ctx.media.upload(accountOf(request).id, request.principal!.mode, file);
        reply.status(201);
        return toMedia(row);
      },
    );

    app.get(
      '/media/:id',
      {
        config: { ...ON_RESOURCE, agents: true },
        schema: {
          tags,
          operationId: 'getMedia',
          summary: 'Get an uploaded file’s details',
          params: MediaIdParams,
          response: { 200: MediaSchema },
        },
      },
      async (request) => toMedia(await ctx.media.get(accountOf(request).id, request.params.id)),
    );

    app.get(
      '/media/:id/content',
      {
        config: { ...ON_RESOURCE, agents: true },
        schema: {
          tags,
          operationId: 'getMediaContent',
          summary: 'Download an uploaded file',
          params: MediaIdParams,
          response: { 200: FILE_RESPONSE },
        },
      },
      async (request, reply) =>
        sendFile(reply, await ctx.media.content(accountOf(request).id, request.params.id)),
    );

    app.delete(
      '/media/:id',
      {
        config: { ...ON_RESOURCE, agents: true },
        schema: {
          tags,
          operationId: 'deleteMedia',
          summary: 'Delete an uploaded file (and Meta’s copy, best effort)',
          description: 'Messages already accepted with it and not yet sent fail with MEDIA_NOT_AVAILABLE.',
          params: MediaIdParams,
          response: { 204: Type.Null({ description: 'Deleted.' }) },
        },
      },
      async (request, reply) => {
        await ctx.media.remove(accountOf(request).id, request.params.id);
        reply.status(204);
      },
    );

    app.get(
      '/messages/:id/media',
      {
        config: {
          agents: true,
          access: 'account',
          errors: ['RESOURCE_NOT_FOUND', 'MEDIA_GONE'] satisfies ErrorCode[],
        },
        schema: {
          tags: ['messages'],
          operationId: 'getMessageMedia',
          summary: 'Download the file a message carries',
          description:
            'A customer’s image, video, audio, document or sticker, fetched from WhatsApp with the channel’s credentials as it arrived (or now, if it has not been yet); or the upload one of your messages was sent with (`media.id`). 404 for a message without a file; 410 MEDIA_GONE when it is no longer kept, or WhatsApp no longer had it; 503 when WhatsApp could not be reached for a file not fetched yet.',
          params: MediaIdParams,
          response: { 200: FILE_RESPONSE },
        },
      },
      async (request, reply) =>
        sendFile(reply, await ctx.media.ofMessage(accountOf(request).id, request.params.id)),
    );
  };
}
