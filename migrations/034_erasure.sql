-- Erasure (docs/operations.md § Erasure): the wallet's ledger stays append-only, except that erasing
-- a contact may take its number out of a transaction's description ("… message to +1…"). Amounts,
-- types, balances, references and times can never change; the money records are kept, by law,
-- without personal data.
CREATE FUNCTION wallet_transactions_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND (to_jsonb(NEW) - 'description') = (to_jsonb(OLD) - 'description') THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION '% is append-only', TG_TABLE_NAME USING ERRCODE = 'restrict_violation';
END;
$$;
DROP TRIGGER wallet_transactions_append_only ON wallet_transactions;
CREATE TRIGGER wallet_transactions_append_only BEFORE UPDATE OR DELETE ON wallet_transactions
  FOR EACH ROW EXECUTE FUNCTION wallet_transactions_guard();
