-- Teams of an account's members, and the conversations they receive (docs/conversations.md § Teams
-- and auto-assignment): a new or reopened conversation of a team is given to an available member
-- under the team's capacity, in the transaction that opens it, with the team's row locked.
CREATE TABLE teams (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  name text NOT NULL,
  mode text NOT NULL CHECK (mode IN ('manual', 'round_robin', 'least_busy')),
  -- The most open conversations of the team one member is given by assignment (null: no limit).
  capacity integer CHECK (capacity IS NULL OR capacity > 0),
  -- The team that receives every new conversation no rule routes elsewhere (one per account).
  is_default boolean NOT NULL DEFAULT false,
  -- What a member going offline does to their open conversations of the team.
  on_offline text NOT NULL CHECK (on_offline IN ('requeue', 'keep')),
  -- Round robin's place: the member given the last conversation.
  last_assigned_id text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (account_id, name)
);
CREATE UNIQUE INDEX teams_one_default ON teams (account_id) WHERE is_default;

CREATE TABLE team_memberships (
  team_id text NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  member_id text NOT NULL REFERENCES team_members (id) ON DELETE CASCADE,
  -- Round robin's order.
  position integer NOT NULL,
  PRIMARY KEY (team_id, member_id)
);
CREATE INDEX team_memberships_member ON team_memberships (member_id);

-- The team a conversation belongs to; with no assignee, it waits in the team's queue: taken oldest
-- first by the drain, listed by last activity in the inbox (GET /conversations?teamId=&unassigned=true).
ALTER TABLE conversations ADD COLUMN team_id text;
CREATE INDEX conversations_team_queue ON conversations (team_id, opened_at, id)
  WHERE status = 'open' AND assignee_id IS NULL AND team_id IS NOT NULL;
CREATE INDEX conversations_team_queue_activity ON conversations (account_id, team_id, last_message_at DESC, id DESC)
  WHERE status = 'open' AND assignee_id IS NULL AND team_id IS NOT NULL;
-- A member's open conversations of a team: its capacity and least-busy counts.
CREATE INDEX conversations_team_assignee ON conversations (team_id, assignee_id)
  WHERE status = 'open' AND assignee_id IS NOT NULL AND team_id IS NOT NULL;
