-- WhatsApp's id for a contact's number (`wa_id`), as Meta reports it: in a send's answer
-- (contacts[].wa_id), as a status callback's recipient_id, and as an inbound message's sender. It
-- can differ from the number the business wrote to (Brazilian mobile numbers with and without the
-- ninth digit, Mexican ones with and without the 1 after +52), and the customer's replies come from
-- it: inbound messages find their contact by it first, then by phone. Digits, without the plus.
ALTER TABLE contacts ADD COLUMN wa_id text;
CREATE INDEX contacts_wa_id ON contacts (account_id, wa_id) WHERE wa_id IS NOT NULL;
