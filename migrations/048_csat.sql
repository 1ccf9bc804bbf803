-- Customer satisfaction surveys (docs/conversations.md § CSAT): the account's setting, and on each
-- conversation what its close asked and the customer answered, with the agent it is about.
CREATE TABLE account_csat (
  account_id text PRIMARY KEY REFERENCES accounts (id),
  scale text NOT NULL CHECK (scale IN ('five', 'faces')),
  question text NOT NULL,
  comment_prompt text,
  thanks text,
  updated_at timestamptz NOT NULL
);

-- Who closed it (the console member; null: an API key, a rule, a deleted contact).
ALTER TABLE conversations ADD COLUMN closed_by text;
-- The close a survey was sent for (its closed_at): one survey per close, whoever sends it.
ALTER TABLE conversations ADD COLUMN csat_close_at timestamptz;
ALTER TABLE conversations ADD COLUMN csat_score integer CHECK (csat_score BETWEEN 1 AND 5);
ALTER TABLE conversations ADD COLUMN csat_comment text;
ALTER TABLE conversations ADD COLUMN csat_agent_id text;
ALTER TABLE conversations ADD COLUMN csat_answered_at timestamptz;
-- Until when the customer's next text is the survey's comment (set when it was asked for).
ALTER TABLE conversations ADD COLUMN csat_comment_until timestamptz;
