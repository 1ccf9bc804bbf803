-- When a dispatcher began handing a queued message to its provider. Set (and committed) before the
-- provider is called; cleared when the provider answered that it did not take the message. A
-- message still `queued` with this set is in doubt: its hand-over was cut off (the process died)
-- before the answer was recorded, and the provider may or may not have it. It is not sent again at
-- once but after TIDINGS_DISPATCH_IN_DOUBT_SECONDS, unless the provider's status callback (which
-- names it by our id) settles it first (src/modules/messages/dispatch.ts).
ALTER TABLE messages ADD COLUMN handover_started_at timestamptz;
