// The business profile customers see for a number, and its photo, as Meta documents them
// (docs/history/issue-46-meta.md §§ 7, 8):
//   GET  /{phone-number-id}/whatsapp_business_profile?fields=about,address,description,email,
//        profile_picture_url,websites,vertical → {data: [{…}]} (some of Meta's pages wrap the
//        object in `business_profile`: both are read);
//   POST /{phone-number-id}/whatsapp_business_profile {messaging_product, …, profile_picture_handle}
//        → {success: true};
//   the photo through Meta's Resumable Upload API, on the Meta app's id:
//   POST /{app-id}/uploads?file_name&file_length&file_type → {id: "upload:…"};
//   POST /{upload:…} with `Authorization: OAuth …`, `file_offset: 0` and the bytes → {h}: the handle.
import type { Dispatcher } from 'undici';
import type { WhatsAppConnection } from './connection.ts';
import { type GraphEndpoint, type GraphResult, graphCall, unreadable } from './graph-call.ts';
import { isRecord } from './json.ts';

export interface BusinessProfile {
  about: string | null;
  address: string | null;
  description: string | null;
  email: string | null;
  websites: string[];
  vertical: string | null;
  profilePictureUrl: string | null;
}

/** The fields a change sets (left out: unchanged), as Meta names them, and the photo's handle. */
export interface BusinessProfileChange {
  about?: string;
  address?: string;
  description?: string;
  email?: string;
  websites?: string[];
  vertical?: string;
  profilePictureHandle?: string;
}

export interface ProfilePhoto {
  bytes: Buffer;
  mimeType: string;
  filename: string;
}

const FIELDS = 'about,address,description,email,profile_picture_url,websites,vertical';

const text = (v: unknown) => (typeof v === 'string' && v ? v : null);

export class WhatsAppBusinessProfile {
  readonly #connection: WhatsAppConnection;
  readonly #endpoint: GraphEndpoint;

  constructor(connection: WhatsAppConnection, dispatcher: Dispatcher) {
    this.#connection = connection;
    this.#endpoint = { graphUrl: connection.graphUrl, timeoutMs: connection.timeoutMs, dispatcher };
  }

  get #path() {
    return `/${encodeURIComponent(this.#connection.phoneNumberId)}/whatsapp_business_profile`;
  }

  async read(): Promise<GraphResult<{ profile: BusinessProfile }>> {
    const token = this.#connection.accessToken;
    const result = await graphCall(this.#endpoint, {
      method: 'GET',
      path: `${this.#path}?fields=${FIELDS}`,
      accessToken: token,
      secrets: [token],
    });
    if (!result.ok) return result;
    const first = isRecord(result.body) && Array.isArray(result.body.data) ? result.body.data[0] : undefined;
    if (!isRecord(first)) return unreadable(result.status, 'without a profile');
    const p = isRecord(first.business_profile) ? first.business_profile : first;
    return {
      ok: true,
      profile: {
        about: text(p.about),
        address: text(p.address),
        description: text(p.description),
        email: text(p.email),
        websites: Array.isArray(p.websites)
          ? p.websites.filter((w): w is string => typeof w === 'string')
          : [],
        vertical: text(p.vertical),
        profilePictureUrl: text(p.profile_picture_url),
      },
    };
  }

  async update(change: BusinessProfileChange): Promise<GraphResult<object>> {
    const token = this.#connection.accessToken;
    const { profilePictureHandle, ...fields } = change;
    const result = await graphCall(this.#endpoint, {
      method: 'POST',
      path: this.#path,
      accessToken: token,
      secrets: [token],
      json: {
        messaging_product: 'whatsapp',
        ...fields,
        ...(profilePictureHandle ? { profile_picture_handle: profilePictureHandle } : {}),
      },
    });
    if (!result.ok) return result;
    if (!isRecord(result.body) || result.body.success !== true)
      return unreadable(result.status, 'without success');
    return { ok: true };
  }

  /** Uploads the photo on the Meta app's Resumable Upload API: the handle the profile takes. */
  async uploadPhoto(appId: string, photo: ProfilePhoto): Promise<GraphResult<{ handle: string }>> {
    const token = this.#connection.accessToken;
    const query = new URLSearchParams({
      file_name: photo.filename,
      file_length: String(photo.bytes.length),
      file_type: photo.mimeType,
    });
    const session = await graphCall(this.#endpoint, {
      method: 'POST',
      path: `/${encodeURIComponent(appId)}/uploads?${query}`,
      accessToken: token,
      secrets: [token],
    });
    if (!session.ok) return session;
    const id = isRecord(session.body) ? text(session.body.id) : null;
    if (!id?.startsWith('upload:')) return unreadable(session.status, 'without an upload session id');
    // The session id is a path of its own (its `?sig=` included); the token goes as OAuth, the
    // offset as a header: Meta takes neither as a query parameter.
    const uploaded = await graphCall(this.#endpoint, {
      method: 'POST',
      path: `/${id}`,
      accessToken: null,
      secrets: [token],
      bytes: photo.bytes,
      headers: { authorization: `OAuth ${token}`, file_offset: '0', 'content-type': photo.mimeType },
    });
    if (!uploaded.ok) return uploaded;
    const handle = isRecord(uploaded.body) ? text(uploaded.body.h) : null;
    if (!handle) return unreadable(uploaded.status, 'without a file handle');
    return { ok: true, handle };
  }
}
