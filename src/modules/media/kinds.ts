// What WhatsApp takes of each kind of media (Meta's "Supported media types"): the MIME types and the
// largest file. Every type belongs to one kind only, so a file's type alone says its kind; a
// `kind` given with the upload must agree with it.
import type { InboundMediaKind } from '../../channels/types.ts';

export type StoredMediaKind = InboundMediaKind;

export const MEDIA_KINDS: readonly StoredMediaKind[] = ['image', 'video', 'audio', 'document', 'sticker'];

const KB = 1024;
const MB = 1024 * 1024;

export const MEDIA_TYPES: Record<StoredMediaKind, readonly string[]> = {
  image: ['image/jpeg', 'image/png'],
  video: ['video/mp4', 'video/3gpp'],
  audio: ['audio/aac', 'audio/amr', 'audio/mpeg', 'audio/mp4', 'audio/ogg'],
  document: [
    'text/plain',
    'application/pdf',
    'application/msword',
    'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    'application/vnd.ms-excel',
    'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    'application/vnd.ms-powerpoint',
    'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  ],
  sticker: ['image/webp'],
};

/** The largest file of each kind; a sticker over STATIC_STICKER_BYTES must be an animated WebP. */
export const MEDIA_LIMITS: Record<StoredMediaKind, number> = {
  image: 5 * MB,
  video: 16 * MB,
  audio: 16 * MB,
  document: 100 * MB,
  sticker: 500 * KB,
};

export const STATIC_STICKER_BYTES = 100 * KB;

export const LARGEST_MEDIA_BYTES = Math.max(...Object.values(MEDIA_LIMITS));

/** Bytes of each stored chunk (media_chunks.bytes). */
export const CHUNK_BYTES = 256 * KB;

/** A MIME type without its parameters, lower-cased ("audio/ogg; codecs=opus" → "audio/ogg"). */
export function essence(mimeType: string): string {
  return mimeType.split(';')[0]!.trim().toLowerCase();
}

/** The kind a file of this type is, or null for a type WhatsApp does not take. */
export function kindOfType(mimeType: string): StoredMediaKind | null {
  const type = essence(mimeType);
  for (const kind of MEDIA_KINDS) if (MEDIA_TYPES[kind].includes(type)) return kind;
  return null;
}

/** "5 MB", "100 KB": a limit as the docs and errors say it. */
export function sizeText(bytes: number): string {
  return bytes >= MB ? `${bytes / MB} MB` : `${bytes / KB} KB`;
}

/**
 * Whether a WebP file (its first bytes) is animated: an extended-format file (RIFF….WEBPVP8X) whose
 * flags byte has the animation bit set.
 */
export function isAnimatedWebp(head: Buffer): boolean {
  return (
    head.length >= 21 &&
    head.toString('latin1', 0, 4) === 'RIFF' &&
    head.toString('latin1', 8, 16) === 'WEBPVP8X' &&
    (head[20]! & 0x02) !== 0
  );
}

const EXTENSIONS: Record<string, string> = {
  'image/jpeg': 'jpg',
  'image/png': 'png',
  'image/webp': 'webp',
  'video/mp4': 'mp4',
  'video/3gpp': '3gp',
  'audio/aac': 'aac',
  'audio/amr': 'amr',
  'audio/mpeg': 'mp3',
  'audio/mp4': 'm4a',
  'audio/ogg': 'ogg',
  'text/plain': 'txt',
  'application/pdf': 'pdf',
  'application/msword': 'doc',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'application/vnd.ms-excel': 'xls',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
  'application/vnd.ms-powerpoint': 'ppt',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation': 'pptx',
};

/** A filename for a file that came without one: its id and the type's usual extension. */
export function defaultFilename(id: string, mimeType: string | null): string {
  const ext = mimeType ? EXTENSIONS[essence(mimeType)] : undefined;
  return ext ? `${id}.${ext}` : id;
}

const BY_EXTENSION: Record<string, string> = {
  ...Object.fromEntries(Object.entries(EXTENSIONS).map(([type, ext]) => [ext, type])),
  jpeg: 'image/jpeg',
  '3gpp': 'video/3gpp',
  opus: 'audio/ogg',
};

/**
 * A part's type as sent, or, when it came as application/octet-stream (or none: what a client sends
 * for a file it does not know), the type its filename's extension says.
 */
export function declaredType(partType: string | undefined, filename: string | undefined): string {
  const type = essence(partType ?? '');
  if (type && type !== 'application/octet-stream') return type;
  const ext = /\.([a-z0-9]+)$/i.exec(filename ?? '')?.[1]?.toLowerCase();
  return (ext && BY_EXTENSION[ext]) || type;
}
