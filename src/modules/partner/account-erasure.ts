// Erasing a whole sub-account (DELETE /partner/accounts/{id}?erase=true): closed first if it is not,
// then every personal field of it erased, in the one transaction (erasure/erase.ts says what stays), once
// its work in flight committed (erasure/lock.ts).
import type { Tx } from '../../kernel/database/db.ts';
import type { EventOutbox } from '../../kernel/outbox/events.ts';
import { eraseData, erasePeople, lockForErasure } from '../erasure/index.ts';
import { setAccountStatus } from './accounts.ts';

export async function eraseAccount(
  tx: Tx,
  events: EventOutbox,
  partnerId: string,
  accountId: string,
): Promise<void> {
  await lockForErasure(tx, accountId);
  await setAccountStatus(tx, events, partnerId, accountId, 'CLOSED');
  await eraseData(tx, { kind: 'account', accountId });
  await erasePeople(tx, accountId);
}
