// The sandbox channel: every account's default, and the channel of every sandbox key. It never
// reaches a provider and is never charged. It hands messages over at once (or refuses them, for
// the test numbers), and the dispatcher then plays the provider's status callbacks after the
// account's sandbox delays (simulation.ts). Templates are reviewed by Meta's rules (review.ts).
import { randomBytes } from 'node:crypto';
import type {
  ChannelAdapter,
  DeleteOutcome,
  MarkReadOutcome,
  OutboundMessage,
  SendOutcome,
  SubmitOutcome,
  TemplateDefinition,
} from '../types.ts';
import { SANDBOX_ERRORS, testNumberBehaviour } from './test-numbers.ts';

export class SandboxAdapter implements ChannelAdapter {
  readonly provider = 'sandbox' as const;

  async send(message: OutboundMessage): Promise<SendOutcome> {
    switch (testNumberBehaviour(message.to)) {
      case 'unreachable':
        return { kind: 'rejected', error: SANDBOX_ERRORS.unreachable };
      case 'unavailable':
        return { kind: 'retry', error: SANDBOX_ERRORS.unavailable };
      default:
        return { kind: 'accepted', providerMessageId: `sandbox.${randomBytes(16).toString('hex')}` };
    }
  }

  async submitTemplate(
    _template: TemplateDefinition,
    _previous?: { providerTemplateId: string },
  ): Promise<SubmitOutcome> {
    // The decision comes later, from the review job, as a provider's callback would.
    return {
      kind: 'submitted',
      providerTemplateId: `sandbox.${randomBytes(12).toString('hex')}`,
      status: 'PENDING',
    };
  }

  async deleteTemplate(_template: { providerTemplateId: string; name: string }): Promise<DeleteOutcome> {
    // The sandbox keeps no templates of its own: the review job reads Tidings' row.
    return { kind: 'deleted' };
  }

  async markRead(_message: { providerMessageId: string; typing: boolean }): Promise<MarkReadOutcome> {
    // No customer to show blue ticks or a typing indicator to: the message only records it.
    return { kind: 'marked' };
  }
}
