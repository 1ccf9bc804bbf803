-- The console's sign-in (docs/console.md): logins, their server-side sessions and one-time
-- invitations. A login is a partner admin (partner_id, no account) or the login of a team member
-- (member_id, account_id); a member's login goes with the member (cascade), and its sessions with it.
CREATE TABLE console_users (
  id text PRIMARY KEY,
  -- Lower-cased; one person, one login in the installation.
  email text NOT NULL UNIQUE,
  name text NOT NULL,
  password_hash text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('partner_admin', 'member')),
  partner_id text REFERENCES partners (id),
  account_id text REFERENCES accounts (id),
  member_id text UNIQUE REFERENCES team_members (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL,
  CHECK (
    (kind = 'partner_admin' AND partner_id IS NOT NULL AND account_id IS NULL AND member_id IS NULL)
    OR (kind = 'member' AND partner_id IS NULL AND account_id IS NOT NULL AND member_id IS NOT NULL)
  )
);
CREATE INDEX console_users_partner ON console_users (partner_id) WHERE partner_id IS NOT NULL;
CREATE INDEX console_users_account ON console_users (account_id) WHERE account_id IS NOT NULL;

CREATE TABLE console_sessions (
  id text PRIMARY KEY,
  user_id text NOT NULL REFERENCES console_users (id) ON DELETE CASCADE,
  -- SHA-256 (hex) of the cookie's token; the token itself is never stored.
  token_hash text NOT NULL UNIQUE,
  csrf_token text NOT NULL,
  created_at timestamptz NOT NULL,
  -- Written at most once a minute; the idle expiry counts from it.
  last_seen_at timestamptz NOT NULL,
  -- The absolute expiry (created_at + TIDINGS_CONSOLE_SESSION_HOURS).
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz,
  address text,
  user_agent text
);
CREATE INDEX console_sessions_user ON console_sessions (user_id) WHERE revoked_at IS NULL;

CREATE TABLE console_invitations (
  id text PRIMARY KEY,
  -- SHA-256 (hex) of the one-time token of the link; the link is shown once to its maker.
  token_hash text NOT NULL UNIQUE,
  kind text NOT NULL CHECK (kind IN ('partner_admin', 'member')),
  email text NOT NULL,
  name text NOT NULL,
  partner_id text REFERENCES partners (id),
  account_id text REFERENCES accounts (id),
  member_id text REFERENCES team_members (id) ON DELETE CASCADE,
  -- Who made it: a console login (lgn_) or an API key (key_).
  created_by text NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  accepted_at timestamptz,
  CHECK (
    (kind = 'partner_admin' AND partner_id IS NOT NULL AND member_id IS NULL)
    OR (kind = 'member' AND account_id IS NOT NULL AND member_id IS NOT NULL)
  )
);
