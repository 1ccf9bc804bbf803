import { type Body, type CallOptions, Resource } from './base.ts';

/** The sandbox's test controls (sandbox keys): play the customer, press keys, skip waits. */
export class Sandbox extends Resource {
  /** A customer's message arriving, as if sent from their phone. */
  inboundMessage(body: Body<'post', '/api/v1/public/sandbox/inbound-messages'>, opts?: CallOptions) {
    return this.t.request('post', '/api/v1/public/sandbox/inbound-messages', { body, ...opts });
  }
  /** A customer changing their number (WhatsApp's user_changed_number): the same contact moves. */
  numberChange(body: Body<'post', '/api/v1/public/sandbox/number-changes'>, opts?: CallOptions) {
    return this.t.request('post', '/api/v1/public/sandbox/number-changes', { body, ...opts });
  }
  /** Runs a waiting sequence enrollment or journey run now instead of after its delay. */
  wake(body: Body<'post', '/api/v1/public/sandbox/wake'>, opts?: CallOptions) {
    return this.t.request('post', '/api/v1/public/sandbox/wake', { body, ...opts });
  }
  /** The callee of a sandbox call presses keys. */
  pressDigits(
    callId: string,
    body: Body<'post', '/api/v1/public/sandbox/calls/{id}/digits'>,
    opts?: CallOptions,
  ) {
    return this.t.request('post', '/api/v1/public/sandbox/calls/{id}/digits', {
      params: { id: callId },
      body,
      ...opts,
    });
  }
}
