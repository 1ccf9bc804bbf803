-- A merge moves a contact's rule runs to the survivor (src/modules/rules/contact-merges.ts), in the
-- transaction of the callback that showed the two are one customer, and erasure finds them by
-- contact: by index, not by a scan of every run of every account.
CREATE INDEX rule_runs_contact ON rule_runs (contact_id) WHERE contact_id IS NOT NULL;
