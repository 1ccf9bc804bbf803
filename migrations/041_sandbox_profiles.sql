-- The business profile of an account on the sandbox channel (GET|PATCH /account/channel/profile):
-- a real number's profile is Meta's and is read from Meta each time; the sandbox has nobody to
-- keep it, so it is kept here (modules/channel-profile).
CREATE TABLE sandbox_profiles (
  account_id text PRIMARY KEY REFERENCES accounts (id),
  -- { about, address, description, email, websites, vertical, profilePhotoMediaId } as set.
  profile jsonb NOT NULL,
  updated_at timestamptz NOT NULL
);
