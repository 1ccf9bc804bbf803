// GET|PATCH /account/channel/profile: the business profile customers see for the account's number.
// A real number's profile is Meta's: read from Meta each time, changed at Meta (the photo through
// Meta's resumable upload on the Meta app's id: the partner's app, or the one the channel names).
// The sandbox keeps a profile of its own (sandbox_profiles), so that the console and integrations
// work the same before a number is connected. A coexistence number's profile is the WhatsApp
// Business app's to edit (Meta: the business profile is not supported on the Cloud API for it).

import type { Channels } from '../../channels/registry.ts';
import type { ChannelConfig } from '../../channels/settings.ts';
import type { BusinessProfileChange, ProfilePhoto } from '../../channels/whatsapp-cloud/business-profile.ts';
import type { GraphFailure } from '../../channels/whatsapp-cloud/graph-call.ts';
import type { SecretBox } from '../../kernel/crypto/secrets.ts';
import type { Database } from '../../kernel/database/db.ts';
import { ApiError, conflict, invalid } from '../../kernel/http/errors.ts';
import type { MediaStore } from '../media/index.ts';
import { loadChannel, partnerAppOfAccount } from '../whatsapp-channel/index.ts';

export interface ProfileServices {
  db: Database;
  channels: Channels;
  secrets: SecretBox;
  media: Pick<MediaStore, 'content'>;
  config: { publicBaseUrl: string };
  now: () => Date;
}

export interface ProfileChange {
  about?: string;
  address?: string;
  description?: string;
  email?: string;
  websites?: string[];
  vertical?: string;
  profilePhotoMediaId?: string;
}

interface SandboxProfile extends Omit<ProfileChange, 'profilePhotoMediaId'> {
  profilePhotoMediaId?: string;
}

/** What Meta said, as an answer: 503 to retry, 409 for a token to reconnect, else 400 on the profile. */
function refusal(what: string, f: GraphFailure): ApiError {
  const code =
    f.metaCode === null ? (f.status === null ? 'no answer' : `HTTP ${f.status}`) : String(f.metaCode);
  if (f.retry) {
    return new ApiError(
      'SERVICE_UNAVAILABLE',
      `Meta could not ${what} now (${code}): ${f.message}. Retry shortly.`,
      {
        headers: { 'retry-after': String(f.retryAfterSeconds ?? 30) },
      },
    );
  }
  if (
    f.metaCode === 190 ||
    (f.metaCode === 100 && f.metaSubcode === 33) ||
    f.status === 401 ||
    f.status === 403
  )
    return conflict(
      `Meta refused to ${what} (${code}): ${f.message}. The channel's token may no longer be good: connect the number again.`,
    );
  return invalid('profile', `was refused by Meta (${code}): ${f.message}`);
}

const isWhatsApp = (c: ChannelConfig) => c.provider === 'whatsapp_cloud' && c.whatsapp !== null;

async function sandboxProfileOf(db: Database, accountId: string): Promise<SandboxProfile> {
  const { rows } = await db.query<{ profile: SandboxProfile }>(
    'SELECT profile FROM sandbox_profiles WHERE account_id = $1',
    [accountId],
  );
  return rows[0]?.profile ?? {};
}

function sandboxView(s: ProfileServices, p: SandboxProfile) {
  return {
    source: 'sandbox' as const,
    about: p.about ?? null,
    address: p.address ?? null,
    description: p.description ?? null,
    email: p.email ?? null,
    websites: p.websites ?? [],
    vertical: p.vertical ?? null,
    profilePhotoUrl: p.profilePhotoMediaId
      ? `${s.config.publicBaseUrl}/api/v1/public/media/${p.profilePhotoMediaId}/content`
      : null,
  };
}

export async function readProfile(s: ProfileServices, accountId: string) {
  const channel = await loadChannel(s.db, accountId);
  if (!isWhatsApp(channel)) return sandboxView(s, await sandboxProfileOf(s.db, accountId));
  const read = await s.channels.whatsappProfile(channel).read();
  if (!read.ok) throw refusal('read the business profile', read);
  const { profilePictureUrl, ...fields } = read.profile;
  return { source: 'whatsapp_cloud' as const, ...fields, profilePhotoUrl: profilePictureUrl };
}

/** The photo's bytes: an image upload of the account (JPEG or PNG, at most 5 MB, as WhatsApp's images). */
async function photoOf(s: ProfileServices, accountId: string, mediaId: string): Promise<ProfilePhoto> {
  const content = await s.media.content(accountId, mediaId).catch((err: unknown) => {
    if (err instanceof ApiError && err.code === 'RESOURCE_NOT_FOUND')
      throw invalid('profilePhotoMediaId', 'names no upload of this account (unknown, deleted or expired)');
    throw err;
  });
  const { row } = content;
  if (row.kind !== 'image' || !row.mime_type)
    throw invalid('profilePhotoMediaId', 'must be an image (JPEG or PNG)');
  const chunks: Buffer[] = [];
  for await (const chunk of content.body) chunks.push(chunk);
  return { bytes: Buffer.concat(chunks), mimeType: row.mime_type, filename: row.filename ?? `${row.id}.jpg` };
}

export async function changeProfile(s: ProfileServices, accountId: string, change: ProfileChange) {
  const channel = await loadChannel(s.db, accountId);
  const photo = change.profilePhotoMediaId ? await photoOf(s, accountId, change.profilePhotoMediaId) : null;
  if (!isWhatsApp(channel)) {
    const stored = await sandboxProfileOf(s.db, accountId);
    const profile = { ...stored, ...change };
    await s.db.query(
      `INSERT INTO sandbox_profiles (account_id, profile, updated_at) VALUES ($1, $2, $3)
       ON CONFLICT (account_id) DO UPDATE SET profile = EXCLUDED.profile, updated_at = EXCLUDED.updated_at`,
      [accountId, JSON.stringify(profile), s.now()],
    );
    return sandboxView(s, profile);
  }
  if (channel.whatsapp?.onboarding?.mode === 'coexistence') {
    throw conflict(
      'This number is on the WhatsApp Business app too (coexistence): its profile is edited in the app, not through the Cloud API.',
    );
  }
  const meta = s.channels.whatsappProfile(channel);
  const { profilePhotoMediaId: _photo, ...fields } = change;
  const update: BusinessProfileChange = { ...fields };
  if (photo) {
    const appId = (await partnerAppOfAccount(s.db, s.secrets, accountId))?.appId ?? channel.whatsapp?.appId;
    if (!appId) {
      throw conflict(
        "A profile photo goes through Meta's resumable upload on the Meta app's id, which this channel does not know: give it as whatsapp.appId with PUT /account/channel.",
      );
    }
    const uploaded = await meta.uploadPhoto(appId, photo);
    if (!uploaded.ok) throw refusal('take the profile photo', uploaded);
    update.profilePictureHandle = uploaded.handle;
  }
  const done = await meta.update(update);
  if (!done.ok) throw refusal('change the business profile', done);
  return readProfile(s, accountId);
}
