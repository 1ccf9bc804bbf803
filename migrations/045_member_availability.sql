-- A team member's availability for new conversations (docs/conversations.md § The team inbox):
-- `online` takes them, `away` keeps what it has and takes none, `offline` takes none (and, for the
-- teams that say so, gives back its open conversations to the team's queue).
ALTER TABLE team_members ADD COLUMN availability text NOT NULL DEFAULT 'online'
  CHECK (availability IN ('online', 'away', 'offline'));
ALTER TABLE team_members ADD COLUMN availability_changed_at timestamptz;
