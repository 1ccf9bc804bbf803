// Meta's business profile of a number and its Resumable Upload API, for the fake Graph API
// (whatsapp-cloud.ts routes these paths here), from Meta's pages (docs/history/issue-46-meta.md
// §§ 7, 8): GET|POST /{phone-number-id}/whatsapp_business_profile with Meta's limits;
// POST /{app-id}/uploads?file_name&file_length&file_type → {id: "upload:…?sig=…"}; POST /{upload:…}
// with `Authorization: OAuth <token>` and `file_offset: 0` headers and the bytes → {h}; the handle
// then set as profile_picture_handle. Independent of src/channels/whatsapp-cloud/business-profile.ts.
import { createHash, randomBytes } from 'node:crypto';
import { graphError } from './graph-errors.ts';
import type { FakeApp } from './meta-onboarding.ts';
import type { FakeBusiness, GraphAnswer, RecordedRequest } from './whatsapp-cloud.ts';

export interface FakeProfile {
  about: string;
  address: string;
  description: string;
  email: string;
  websites: string[];
  vertical: string;
  profile_picture_url: string;
}

interface UploadSession {
  appId: string;
  business: FakeBusiness;
  fileName: string;
  fileLength: number;
  fileType: string;
  bytes: Buffer | null;
}

const VERTICALS = [
  'OTHER',
  'AUTO',
  'BEAUTY',
  'APPAREL',
  'EDU',
  'ENTERTAIN',
  'EVENT_PLAN',
  'FINANCE',
  'GROCERY',
  'GOVT',
  'HOTEL',
  'HEALTH',
  'NONPROFIT',
  'PROF_SERVICES',
  'RETAIL',
  'TRAVEL',
  'RESTAURANT',
];
const UPLOAD_TYPES = ['application/pdf', 'image/jpeg', 'image/jpg', 'image/png', 'video/mp4'];
const PROFILE_FIELDS = [
  'about',
  'address',
  'description',
  'email',
  'profile_picture_url',
  'websites',
  'vertical',
];

const invalid = (message: string) => graphError(100, { message: `(#100) ${message}` });

export class FakeMetaProfiles {
  readonly #profiles = new Map<string, FakeProfile>();
  readonly #sessions = new Map<string, UploadSession>();
  /** Uploaded files by handle: what a profile's photo was set from. */
  readonly files = new Map<string, { bytes: Buffer; type: string; business: FakeBusiness }>();
  readonly #apps: () => FakeApp[];

  constructor(apps: () => FakeApp[]) {
    this.#apps = apps;
  }

  /** The number's profile as Meta holds it (empty strings where nothing was set). */
  profileOf(business: FakeBusiness): FakeProfile {
    let profile = this.#profiles.get(business.phoneNumberId);
    if (!profile) {
      profile = {
        about: '',
        address: '',
        description: '',
        email: '',
        websites: [],
        vertical: 'UNDEFINED',
        profile_picture_url: '',
      };
      this.#profiles.set(business.phoneNumberId, profile);
    }
    return profile;
  }

  /** GET|POST /{phone-number-id}/whatsapp_business_profile. */
  profile(req: RecordedRequest, url: URL, business: FakeBusiness): GraphAnswer {
    const profile = this.profileOf(business);
    if (req.method === 'GET') {
      const asked = url.searchParams.get('fields')?.split(',') ?? PROFILE_FIELDS;
      const unknown = asked.find((f) => !PROFILE_FIELDS.includes(f));
      if (unknown)
        return invalid(
          `Tried accessing nonexisting field (${unknown}) on node type (WhatsAppBusinessProfile)`,
        );
      const shown: Record<string, unknown> = { messaging_product: 'whatsapp' };
      for (const f of asked) {
        const value = profile[f as keyof FakeProfile];
        // Meta leaves out what is not set.
        if (Array.isArray(value) ? value.length > 0 : value !== '') shown[f] = value;
      }
      return { status: 200, body: { data: [shown] } };
    }
    if (req.method !== 'POST') return invalid('Unsupported request');
    const body = req.body;
    if (!body || typeof body !== 'object') return invalid('The request body must be JSON');
    if (body.messaging_product !== 'whatsapp') return invalid('The parameter messaging_product is required.');
    const allowed = [
      'messaging_product',
      'about',
      'address',
      'description',
      'email',
      'websites',
      'vertical',
      'profile_picture_handle',
    ];
    const extra = Object.keys(body).find((k) => !allowed.includes(k));
    if (extra) return invalid(`Param ${extra} is not a valid parameter`);
    const str = (k: string, max: number, min = 0) =>
      body[k] === undefined ||
      (typeof body[k] === 'string' && [...body[k]].length <= max && [...body[k]].length >= min);
    if (!str('about', 139, 1)) return invalid('Param about must be at most 139 characters long');
    if (!str('address', 256)) return invalid('Param address must be at most 256 characters long');
    if (!str('description', 512)) return invalid('Param description must be at most 512 characters long');
    if (!str('email', 128) || (body.email !== undefined && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(body.email)))
      return invalid('Param email must be a valid email address');
    if (
      body.websites !== undefined &&
      !(
        Array.isArray(body.websites) &&
        body.websites.length <= 2 &&
        body.websites.every(
          (w: unknown) => typeof w === 'string' && /^https?:\/\//.test(w) && w.length <= 256,
        )
      )
    )
      return invalid('Param websites must be an array of at most 2 URLs');
    if (body.vertical !== undefined && !VERTICALS.includes(body.vertical))
      return invalid(`Param vertical must be one of {${VERTICALS.join(', ')}}`);
    if (body.profile_picture_handle !== undefined) {
      const file = this.files.get(body.profile_picture_handle);
      if (!file || file.business !== business)
        return graphError(131009, { details: 'Invalid profile_picture_handle' });
      profile.profile_picture_url = `https://pps.whatsapp.net/v/t61.24694-24/${createHash('sha256').update(file.bytes).digest('hex').slice(0, 24)}_n.jpg`;
    }
    for (const k of ['about', 'address', 'description', 'email', 'websites', 'vertical'] as const)
      if (body[k] !== undefined) (profile as any)[k] = body[k];
    return { status: 200, body: { success: true } };
  }

  /** POST /{app-id}/uploads: a session for a file of this app, for the caller's token. */
  startUpload(url: URL, appId: string, caller: FakeBusiness | undefined): GraphAnswer | undefined {
    const app = this.#apps().find((a) => a.appId === appId);
    if (!app) return undefined;
    if (!caller) return graphError(190);
    const fileName = url.searchParams.get('file_name');
    const fileLength = Number(url.searchParams.get('file_length'));
    const fileType = url.searchParams.get('file_type') ?? '';
    if (!fileName) return invalid('The parameter file_name is required.');
    if (!Number.isInteger(fileLength) || fileLength <= 0)
      return invalid('The parameter file_length is required.');
    if (!UPLOAD_TYPES.includes(fileType))
      return invalid(`Param file_type must be one of {${UPLOAD_TYPES.join(', ')}}`);
    const id = `upload:${randomBytes(24).toString('base64url')}`;
    this.#sessions.set(id, { appId, business: caller, fileName, fileLength, fileType, bytes: null });
    return { status: 200, body: { id: `${id}?sig=${randomBytes(8).toString('base64url')}` } };
  }

  /** POST /{upload:…}: the bytes, with the OAuth header and file_offset 0; the file's handle. */
  upload(req: RecordedRequest, sessionId: string, businesses: FakeBusiness[]): GraphAnswer {
    const session = this.#sessions.get(sessionId);
    if (!session) return invalid('Invalid upload session');
    const token = /^OAuth (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
    const caller = token ? businesses.find((b) => b.accessToken === token) : undefined;
    if (!caller || caller !== session.business) return graphError(190);
    if (req.headers.file_offset !== '0') return invalid('The header file_offset is required.');
    if (req.bytes.length !== session.fileLength)
      return invalid(
        `The file is ${req.bytes.length} bytes, not the file_length of the session (${session.fileLength})`,
      );
    session.bytes = req.bytes;
    const h = `4::${Buffer.from(session.fileType).toString('base64')}:${randomBytes(18).toString('base64url')}`;
    this.files.set(h, { bytes: req.bytes, type: session.fileType, business: caller });
    return { status: 200, body: { h } };
  }
}
