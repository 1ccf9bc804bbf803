// The business profile as the API shows and takes it, with Meta's limits (its business profile
// reference: about 1–139 characters, address 256, description 512, email 128, at most two
// websites of 256 with their scheme, a vertical of Meta's list).
import { Type } from 'typebox';
import { nullable } from '../../kernel/http/schemas.ts';

/** Meta's verticals a profile may be set to (UNDEFINED and NOT_A_BIZ are Meta's to give, not to set). */
export const VERTICALS = [
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
] as const;

const Websites = Type.Array(Type.String({ maxLength: 256, pattern: '^https?://[^\\s]+$' }), {
  maxItems: 2,
  description: 'At most two, each with http:// or https://.',
});

export const ProfileSchema = Type.Object(
  {
    source: Type.Union([Type.Literal('whatsapp_cloud'), Type.Literal('sandbox')], {
      description: "whatsapp_cloud: read from Meta just now; sandbox: the sandbox channel's own.",
    }),
    about: nullable(Type.String({ description: 'The "About" text under the name (1–139 characters).' })),
    address: nullable(Type.String()),
    description: nullable(Type.String()),
    email: nullable(Type.String()),
    websites: Type.Array(Type.String()),
    vertical: nullable(Type.String({ description: "Meta's industry of the business (RETAIL, …)." })),
    profilePhotoUrl: nullable(
      Type.String({
        description:
          "Where Meta serves the photo (its URL changes; fetch it when shown). The sandbox: the upload's content (GET /media/{id}/content).",
      }),
    ),
  },
  {
    title: 'BusinessProfile',
    examples: [
      {
        source: 'whatsapp_cloud',
        about: 'Succulent specialists!',
        address: '1 Hacker Way, Menlo Park, CA 94025',
        description: 'Plants delivered the same day.',
        email: 'hello@example.com',
        websites: ['https://www.example.com/'],
        vertical: 'RETAIL',
        profilePhotoUrl: null,
      },
    ],
  },
);

export const PatchProfileBody = Type.Object(
  {
    about: Type.Optional(Type.String({ minLength: 1, maxLength: 139 })),
    address: Type.Optional(Type.String({ maxLength: 256 })),
    description: Type.Optional(Type.String({ maxLength: 512 })),
    email: Type.Optional(Type.String({ format: 'email', maxLength: 128 })),
    websites: Type.Optional(Websites),
    vertical: Type.Optional(Type.Enum([...VERTICALS])),
    profilePhotoMediaId: Type.Optional(
      Type.String({
        pattern: '^med_[0-9a-z]{26}$',
        description:
          "An image uploaded with POST /media (JPEG or PNG, at most 5 MB; Meta recommends 640×640): Tidings hands it to Meta's resumable upload and sets it as the photo.",
      }),
    ),
  },
  {
    additionalProperties: false,
    minProperties: 1,
    description: 'The fields to change; those left out stay as they are.',
  },
);
