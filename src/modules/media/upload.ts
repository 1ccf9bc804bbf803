// Reads POST /media's multipart body as it streams in: the `file` part (hashed and cut into the
// chunks it is stored in as it arrives, so the file is held in memory once) and an optional `kind`
// field. The file's type must be one WhatsApp takes, and of the kind given (if one is); its size is
// checked against its kind's limit while it arrives: a file over it is read to its end but not kept.
import type { FastifyRequest } from 'fastify';
import { ApiError, type FieldIssue } from '../../kernel/http/errors.ts';
import { invalidFields } from '../contacts/index.ts';
import { ChunkedFile } from './chunks.ts';
import {
  declaredType,
  isAnimatedWebp,
  kindOfType,
  LARGEST_MEDIA_BYTES,
  MEDIA_KINDS,
  MEDIA_LIMITS,
  MEDIA_TYPES,
  STATIC_STICKER_BYTES,
  type StoredMediaKind,
  sizeText,
} from './kinds.ts';

export interface ReceivedFile {
  kind: StoredMediaKind;
  mimeType: string;
  filename: string | null;
  sizeBytes: number;
  /** Hex. */
  sha256: string;
  chunks: Buffer[];
}

/** What a multipart body may hold around the file (the route's body limit adds this to the largest file). */
export const MULTIPART_OVERHEAD_BYTES = 64 * 1024;

const tooLarge = (issue: string) =>
  new ApiError('PAYLOAD_TOO_LARGE', `file: ${issue}`, { details: [{ field: 'file', issue }] });

const typeIssue = (kind: StoredMediaKind | null, type: string) =>
  kind
    ? `is ${type || 'of no type'}; a ${kind} must be one of ${MEDIA_TYPES[kind].join(', ')}`
    : `is ${type || 'of no type'}, which WhatsApp does not take (images: JPEG or PNG; video: MP4 or 3GPP; audio: AAC, AMR, MP3, MP4 or OGG; documents: text, PDF or Office; stickers: WebP)`;

/** Gathers a stream into its chunks up to `limit` bytes; past it the rest is only counted. */
async function gather(stream: AsyncIterable<Buffer>, limit: number) {
  const file = new ChunkedFile();
  let size = 0;
  for await (const data of stream) {
    size += data.length;
    // Over: the rest is read and dropped, so the client gets the answer rather than a reset.
    if (size <= limit) file.add(data);
  }
  const sha256 = file.finish();
  return { size, sha256, chunks: size <= limit ? file.chunks : [] };
}

/** Reads the upload; throws 400 (type, kind, missing file), 413 (too large) or 415 (not multipart). */
export async function receiveUpload(request: FastifyRequest): Promise<ReceivedFile> {
  if (!request.isMultipart()) {
    throw new ApiError(
      'UNSUPPORTED_MEDIA_TYPE',
      'Send the file as multipart/form-data: a `file` part, and optionally a `kind` field.',
    );
  }
  const issues: FieldIssue[] = [];
  let kindField: StoredMediaKind | null = null;
  let file: (ReceivedFile & { overLimit: number | null }) | null = null;
  try {
    const parts = request.parts({
      limits: { fileSize: LARGEST_MEDIA_BYTES, files: 1, fields: 4, fieldSize: 200, parts: 6 },
    });
    for await (const part of parts) {
      if (part.type === 'field') {
        if (part.fieldname !== 'kind') {
          issues.push({ field: part.fieldname, issue: 'is not a field of an upload (file, kind)' });
        } else if (!MEDIA_KINDS.includes(String(part.value) as StoredMediaKind)) {
          issues.push({ field: 'kind', issue: `must be one of ${MEDIA_KINDS.join(', ')}` });
        } else kindField = String(part.value) as StoredMediaKind;
        continue;
      }
      if (part.fieldname !== 'file') {
        issues.push({ field: part.fieldname, issue: 'is not a field of an upload: send the file as `file`' });
        part.file.resume();
        continue;
      }
      const type = declaredType(part.mimetype, part.filename);
      const kind = kindOfType(type);
      if (!kind || (kindField && kindField !== kind)) {
        issues.push({ field: 'file', issue: typeIssue(kindField, type) });
        part.file.resume();
        continue;
      }
      const limit = MEDIA_LIMITS[kind];
      const got = await gather(part.file, limit);
      if (part.file.truncated) throw tooLarge(`must be at most ${sizeText(limit)} for a ${kind}`);
      file = {
        kind,
        mimeType: type,
        filename: part.filename?.trim().slice(0, 240) || null,
        sizeBytes: got.size,
        sha256: got.sha256,
        chunks: got.chunks,
        overLimit: got.size > limit ? limit : null,
      };
    }
  } catch (err) {
    throw multipartError(err);
  }
  if (!file && !issues.some((i) => i.field === 'file')) issues.push({ field: 'file', issue: 'is required' });
  if (file && kindField && kindField !== file.kind) {
    // The kind came after the file.
    issues.push({ field: 'file', issue: typeIssue(kindField, file.mimeType) });
  }
  if (issues.length > 0) throw invalidFields(issues);
  const received = file!;
  if (received.overLimit !== null) {
    throw tooLarge(
      `is ${received.sizeBytes} bytes; a ${received.kind} must be at most ${sizeText(received.overLimit)}`,
    );
  }
  if (received.sizeBytes === 0) throw invalidFields([{ field: 'file', issue: 'is empty' }]);
  if (
    received.kind === 'sticker' &&
    received.sizeBytes > STATIC_STICKER_BYTES &&
    !isAnimatedWebp(received.chunks[0]!)
  ) {
    throw tooLarge(
      `is ${received.sizeBytes} bytes; a static sticker must be at most ${sizeText(STATIC_STICKER_BYTES)} (an animated one ${sizeText(MEDIA_LIMITS.sticker)})`,
    );
  }
  const { overLimit: _, ...rest } = received;
  return rest;
}

/** busboy's and @fastify/multipart's errors as the API's. */
function multipartError(err: unknown): unknown {
  if (err instanceof ApiError) return err;
  const code = (err as { code?: string }).code ?? '';
  if (code === 'FST_REQ_FILE_TOO_LARGE') return tooLarge(`must be at most ${sizeText(LARGEST_MEDIA_BYTES)}`);
  if (code === 'FST_FILES_LIMIT')
    return invalidFields([{ field: 'file', issue: 'send one file per upload' }]);
  if (code === 'FST_PARTS_LIMIT' || code === 'FST_FIELDS_LIMIT')
    return invalidFields([{ field: 'body', issue: 'holds more parts than an upload has (file, kind)' }]);
  if (code.startsWith('FST_') || /multipart|boundary|Unexpected end/i.test(String((err as Error).message)))
    return invalidFields([{ field: 'body', issue: 'is not a readable multipart/form-data body' }]);
  return err;
}
