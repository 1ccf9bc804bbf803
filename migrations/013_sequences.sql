-- Automation I: sequences (docs/automation.md § Sequences). A sequence holds its current definition
-- (steps, enrollment, exit, send window); every published version is kept in sequence_versions, and
-- an enrollment runs on the version it started on, whatever is edited after.
CREATE TABLE sequences (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  name text NOT NULL,
  description text,
  status text NOT NULL CHECK (status IN ('draft', 'active', 'paused', 'archived')),
  -- The current version: edited in place while a draft, a new one for each edit once published.
  version integer NOT NULL,
  -- {steps, enrollment, exit, sendWindow}, as the API shows them.
  definition jsonb NOT NULL,
  -- enrollment.trigger.event, kept apart for the engine's lookup of an event's sequences.
  trigger_event text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX sequences_account ON sequences (account_id, id);
CREATE INDEX sequences_trigger ON sequences (account_id, trigger_event) WHERE status = 'active';

CREATE TABLE sequence_versions (
  sequence_id text NOT NULL REFERENCES sequences (id) ON DELETE CASCADE,
  version integer NOT NULL,
  definition jsonb NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (sequence_id, version)
);

-- One contact's way through one version of a sequence. `step_index` is the step waited for (the
-- number of steps once ended); `next_run_at` is when it is tried (its delay, moved to the send
-- window's next opening), null once ended. The step timer takes due rows FOR UPDATE SKIP LOCKED and
-- records a step's outcome in the transaction that sends it: each step is sent at most once.
CREATE TABLE sequence_enrollments (
  id text PRIMARY KEY,
  account_id text NOT NULL,
  sequence_id text NOT NULL REFERENCES sequences (id) ON DELETE CASCADE,
  version integer NOT NULL,
  contact_id text NOT NULL,
  status text NOT NULL CHECK (status IN ('active', 'completed', 'exited', 'failed', 'canceled')),
  exit_reason text,
  -- Why a failed enrollment failed.
  reason text,
  step_index integer NOT NULL,
  next_run_at timestamptz,
  -- [{stepId, status: pending|sent|skipped|failed, messageId?, at?, reason?}], one per step.
  steps jsonb NOT NULL,
  -- Enrolled by a sandbox key or a sandbox event: its messages go to the sandbox.
  sandbox boolean NOT NULL,
  -- Whether the contact was opted in when enrolled: one who was and no longer is has opted out.
  opted_in_at_start boolean NOT NULL,
  -- The event that enrolled the contact (its data is the steps' `event` in templates), if any.
  trigger_event_id text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  ended_at timestamptz
);
CREATE INDEX sequence_enrollments_due ON sequence_enrollments (next_run_at) WHERE status = 'active';
CREATE INDEX sequence_enrollments_sequence ON sequence_enrollments (sequence_id, id);
CREATE INDEX sequence_enrollments_contact ON sequence_enrollments (contact_id, sequence_id);

ALTER TABLE bulk_jobs DROP CONSTRAINT bulk_jobs_kind_check;
ALTER TABLE bulk_jobs ADD CONSTRAINT bulk_jobs_kind_check CHECK (kind IN ('contacts', 'messages', 'enrollments'));
