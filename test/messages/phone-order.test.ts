// The order of one number's messages between a process's dispatch loops (phone-order.ts), where
// the timing that breaks it is too rare to provoke through HTTP: a claim that began first and
// returned last.
import { describe, expect, it } from 'vitest';
import { PhoneOrder } from '../../src/modules/messages/phone-order.ts';

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('one number’s messages in two batches', () => {
  it('go oldest first when the claim that began first returns last', async () => {
    const order = new PhoneOrder();
    const sent: string[] = [];
    const older = order.beginClaim();
    const newer = order.beginClaim();
    // The newer batch's claim returns first, with the later message.
    order.hold('acct/+1', ['msg_2']);
    newer.held();
    const newerGoes = newer.earlier.then(() =>
      order.inTurn('acct/+1', 'msg_2', async () => sent.push('msg_2')),
    );
    await tick();
    expect(sent).toEqual([]);
    order.hold('acct/+1', ['msg_1']);
    older.held();
    await older.earlier;
    await order.inTurn('acct/+1', 'msg_1', async () => sent.push('msg_1'));
    await newerGoes;
    expect(sent).toEqual(['msg_1', 'msg_2']);
  });

  it('a claim that failed does not hold up the ones begun after it', async () => {
    const order = new PhoneOrder();
    const failed = order.beginClaim();
    const next = order.beginClaim();
    failed.held();
    order.hold('acct/+1', ['msg_3']);
    next.held();
    await next.earlier;
    expect(await order.inTurn('acct/+1', 'msg_3', async () => 'sent')).toBe('sent');
  });
});
