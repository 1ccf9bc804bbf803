-- Voice I: scripts (docs/voice.md § Scripts). A script holds its current definition (language, voice,
-- tts or ivr, onMachine); every published version is kept with its TwiML in voice_script_versions,
-- and a call plays the version it was placed with.
CREATE TABLE voice_scripts (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  name text NOT NULL,
  type text NOT NULL CHECK (type IN ('tts', 'ivr')),
  status text NOT NULL CHECK (status IN ('draft', 'published', 'archived')),
  -- Edited in place while a draft; each edit once published makes the next.
  version integer NOT NULL,
  definition jsonb NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX voice_scripts_account ON voice_scripts (account_id, id);

CREATE TABLE voice_script_versions (
  script_id text NOT NULL REFERENCES voice_scripts (id) ON DELETE CASCADE,
  version integer NOT NULL,
  definition jsonb NOT NULL,
  -- Each node's TwiML as published (texts still Liquid: rendered per call).
  twiml jsonb NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (script_id, version)
);
