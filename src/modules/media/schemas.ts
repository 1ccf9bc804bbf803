import { Type } from 'typebox';
import { Timestamp } from '../../kernel/http/schemas.ts';
import { LARGEST_MEDIA_BYTES } from './kinds.ts';
import type { MediaRow } from './repo.ts';

const KindSchema = Type.Union(
  [
    Type.Literal('image'),
    Type.Literal('video'),
    Type.Literal('audio'),
    Type.Literal('document'),
    Type.Literal('sticker'),
  ],
  { description: 'image, video, audio, document or sticker.' },
);

export const MediaSchema = Type.Object(
  {
    id: Type.String({ examples: ['med_01jv0000000000000000000000'] }),
    kind: KindSchema,
    mimeType: Type.String({ examples: ['image/jpeg'] }),
    sizeBytes: Type.Integer(),
    sha256: Type.String({ description: 'The SHA-256 of the bytes, in hex.' }),
    filename: Type.String({ description: "The upload's filename, or one made of the id when it had none." }),
    createdAt: Timestamp,
    expiresAt: {
      ...Timestamp,
      description: 'When it is deleted (TIDINGS_MEDIA_RETENTION_DAYS after upload).',
    },
  },
  { title: 'Media' },
);

/** The multipart body, for the OpenAPI document: the route reads it as a stream (upload.ts). */
export const UploadBody = {
  content: {
    'multipart/form-data': {
      schema: Type.Object(
        {
          file: Type.String({
            format: 'binary',
            description:
              'The file, with its Content-Type: image/jpeg or image/png (≤ 5 MB); video/mp4 or video/3gpp (≤ 16 MB); audio/aac, audio/amr, audio/mpeg, audio/mp4 or audio/ogg (≤ 16 MB); text/plain, application/pdf or an Office type (≤ 100 MB); image/webp, a sticker (≤ 100 KB, animated ≤ 500 KB).',
          }),
          kind: Type.Optional({
            ...KindSchema,
            description:
              'Optional: the type says the kind; given, it must agree with the type (400 otherwise).',
          }),
        },
        { description: `At most ${LARGEST_MEDIA_BYTES / 1024 / 1024} MB, per kind as above.` },
      ),
    },
  },
};

export const MediaIdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });

export function toMedia(row: MediaRow) {
  return {
    id: row.id,
    kind: row.kind,
    mimeType: row.mime_type ?? 'application/octet-stream',
    sizeBytes: row.size_bytes ?? 0,
    sha256: row.sha256 ?? '',
    filename: row.filename ?? row.id,
    createdAt: row.created_at.toISOString(),
    expiresAt: row.expires_at.toISOString(),
  };
}
