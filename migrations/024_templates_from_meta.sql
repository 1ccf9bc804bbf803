-- Templates from Meta (docs/messaging.md § Templates from Meta): what Meta says of a template's
-- quality (message_template_quality_update, or a sync), and how its placeholders are written:
-- POSITIONAL ({{1}}, {{2}}, …) or NAMED ({{first_name}}), which decides the shape of a send's
-- `parameters`.
ALTER TABLE templates
  ADD COLUMN quality_score text CHECK (quality_score IN ('GREEN', 'YELLOW', 'RED', 'UNKNOWN')),
  ADD COLUMN quality_updated_at timestamptz,
  ADD COLUMN parameter_format text NOT NULL DEFAULT 'POSITIONAL'
    CHECK (parameter_format IN ('POSITIONAL', 'NAMED'));
