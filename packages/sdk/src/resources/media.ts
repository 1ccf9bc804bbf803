import { type CallOptions, Resource } from './base.ts';

type Kind = 'image' | 'video' | 'audio' | 'document' | 'sticker';

/** Files to send in messages (kept for a while, then MEDIA_GONE). */
export class Media extends Resource {
  /**
   * Uploads a file. `file` is a Blob (a File keeps its name) whose type is the file's Content-Type;
   * or pass a ready FormData with `file` (and `kind`).
   */
  upload(file: Blob | FormData, options: { kind?: Kind; filename?: string } & CallOptions = {}) {
    const { kind, filename, ...opts } = options;
    let form: FormData;
    if (file instanceof FormData) form = file;
    else {
      form = new FormData();
      if (kind) form.set('kind', kind);
      const name = filename ?? (typeof File !== 'undefined' && file instanceof File ? file.name : 'upload');
      form.set('file', file, name);
    }
    return this.t.request('post', '/api/v1/public/media', { body: form, ...opts });
  }
  get(id: string, opts?: CallOptions) {
    return this.t.request('get', '/api/v1/public/media/{id}', { params: { id }, ...opts });
  }
  /** The file itself, as a Blob (its type is the file's Content-Type). */
  content(id: string, opts?: CallOptions): Promise<Blob> {
    return this.t.request('get', '/api/v1/public/media/{id}/content', {
      params: { id },
      ...opts,
    }) as Promise<Blob>;
  }
  delete(id: string, opts?: CallOptions) {
    return this.t.request('delete', '/api/v1/public/media/{id}', { params: { id }, ...opts });
  }
}
