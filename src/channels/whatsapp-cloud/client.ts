// The WhatsApp Cloud API behind ChannelAdapter: sends messages and submits templates over the Graph
// API with a business's access token. Every call ends in an outcome, never a throw: Meta's errors,
// unreadable answers, refusals and timeouts are all classified by errors.ts. Connections come from a
// dispatcher shared by every adapter (one per channel would open a pool per tenant).
import { Agent, type Dispatcher } from 'undici';
import { type Exchange, exchangeJson, type JsonAnswer } from '../../kernel/outbound/http-answers.ts';
import { providerDigits } from '../../kernel/values/phones.ts';
import type {
  ChannelAdapter,
  DeleteOutcome,
  MarkReadOutcome,
  OutboundMessage,
  ProviderError,
  SendOutcome,
  SubmitOutcome,
  TemplateDefinition,
} from '../types.ts';
import type { WhatsAppConnection } from './connection.ts';
import {
  type ClassifiedFailure,
  classifyAnswer,
  classifyNoAnswer,
  graphErrorOf,
  toSendOutcome,
  toSubmitOutcome,
  trimMessage,
} from './errors.ts';
import { isRecord, records } from './json.ts';
import { messageBody, templateSubmissionBody } from './payloads.ts';
import { type MetaTemplatePage, readTemplatePage, TEMPLATE_FIELDS } from './templates.ts';

export type TemplatePageOutcome =
  | { kind: 'page'; page: MetaTemplatePage }
  | { kind: 'retry' | 'rejected'; error: ProviderError };

/** The dispatcher adapters share: keep-alive connections to the Graph API, bounded waits. */
export function createGraphAgent(timeoutMs: number): Agent {
  return new Agent({
    connect: { timeout: timeoutMs },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    keepAliveTimeout: 30_000,
  });
}

export type PhoneNumberCheck =
  | {
      ok: true;
      displayPhoneNumber: string;
      verifiedName: string;
      /** Meta's `throughput.level`: STANDARD (80 messages a second), HIGH (up to 1,000). */
      throughputLevel: string | null;
      /** Meta's `messaging_limit_tier`: TIER_250 … TIER_UNLIMITED (unique customers a day). */
      messagingLimitTier: string | null;
      /** Meta's `quality_rating`: GREEN, YELLOW, RED, UNKNOWN. */
      qualityRating: string | null;
    }
  | { ok: false; error: ProviderError; retryable: boolean };

type Answer = JsonAnswer;
type CallResult = Exchange;

export class WhatsAppCloudAdapter implements ChannelAdapter {
  readonly provider = 'whatsapp_cloud' as const;
  readonly #connection: WhatsAppConnection;
  readonly #dispatcher: Dispatcher;

  constructor(connection: WhatsAppConnection, dispatcher: Dispatcher) {
    this.#connection = connection;
    this.#dispatcher = dispatcher;
  }

  async send(message: OutboundMessage): Promise<SendOutcome> {
    const path = `/${encodeURIComponent(this.#connection.phoneNumberId)}/messages`;
    const result = await this.#call('POST', path, messageBody(message));
    if (!result.answered) {
      const failure = this.#noAnswer(result.reason);
      // Meta may have taken it (the answer was lost, not the request): not sent again blindly.
      return result.mayHaveArrived ? { kind: 'in_doubt', error: failure.error } : toSendOutcome(failure);
    }
    const { answer } = result;
    if (answer.status < 200 || answer.status > 299) return toSendOutcome(this.#failed(answer));
    const body = isRecord(answer.body) ? answer.body : {};
    const first = records(body.messages)[0];
    if (first && typeof first.id === 'string' && first.id) {
      // Meta's id for the number, which "may not match the input" (Brazil, Mexico): the customer's
      // replies come from it. message_status is Meta's word on template pacing (accepted,
      // held_for_quality_assessment, paused): either way the message is only taken, not sent.
      const waId = providerDigits(records(body.contacts)[0]?.wa_id);
      const status =
        typeof first.message_status === 'string' && first.message_status ? first.message_status : null;
      return {
        kind: 'accepted',
        providerMessageId: first.id,
        ...(waId ? { recipientWaId: waId } : {}),
        ...(status ? { providerStatus: status } : {}),
      };
    }
    // A success that does not say what it took: Meta may have the message.
    return { kind: 'in_doubt', error: this.#unreadable(answer, 'without a message id').error };
  }

  async submitTemplate(
    template: TemplateDefinition,
    previous?: { providerTemplateId: string },
  ): Promise<SubmitOutcome> {
    if (previous) return this.#editTemplate(template, previous.providerTemplateId);
    const path = `/${encodeURIComponent(this.#connection.businessAccountId)}/message_templates`;
    const result = await this.#call('POST', path, templateSubmissionBody(template));
    if (!result.answered) return toSubmitOutcome(this.#noAnswer(result.reason));
    const { answer } = result;
    if (answer.status < 200 || answer.status > 299) return toSubmitOutcome(this.#failed(answer));
    const body = isRecord(answer.body) ? answer.body : {};
    const id = typeof body.id === 'string' || typeof body.id === 'number' ? String(body.id) : '';
    if (!id) return toSubmitOutcome(this.#unreadable(answer, 'without a template id'));
    // Meta answers PENDING, or decides at once; any other word is still a review under way.
    const status = body.status === 'APPROVED' || body.status === 'REJECTED' ? body.status : 'PENDING';
    return { kind: 'submitted', providerTemplateId: id, status };
  }

  /** Meta's edit (POST /{template-id}): the template keeps its id and goes back to review. */
  async #editTemplate(template: TemplateDefinition, providerTemplateId: string): Promise<SubmitOutcome> {
    const { category, components, parameter_format } = templateSubmissionBody(template) as {
      category: unknown;
      components: unknown;
      parameter_format?: unknown;
    };
    // A NAMED template says so again: Meta's edit takes the parameter format beside the components.
    const result = await this.#call('POST', `/${encodeURIComponent(providerTemplateId)}`, {
      category,
      components,
      ...(parameter_format ? { parameter_format } : {}),
    });
    if (!result.answered) return toSubmitOutcome(this.#noAnswer(result.reason));
    const { answer } = result;
    if (answer.status < 200 || answer.status > 299) return toSubmitOutcome(this.#failed(answer));
    if (!isRecord(answer.body) || answer.body.success !== true) {
      return toSubmitOutcome(this.#unreadable(answer, 'without success'));
    }
    return { kind: 'submitted', providerTemplateId, status: 'PENDING' };
  }

  /**
   * Meta's delete of one language of a template: DELETE /{waba-id}/message_templates with the
   * template's id (hsm_id) and name, both required. A template Meta no longer has (deleted in
   * WhatsApp Manager) is answered as an unknown object (code 100, subcode 33) or a 404: deleted.
   */
  async deleteTemplate(template: { providerTemplateId: string; name: string }): Promise<DeleteOutcome> {
    const query = new URLSearchParams({ hsm_id: template.providerTemplateId, name: template.name });
    const path = `/${encodeURIComponent(this.#connection.businessAccountId)}/message_templates?${query}`;
    const result = await this.#call('DELETE', path);
    if (!result.answered) return toDeleteOutcome(this.#noAnswer(result.reason));
    const { answer } = result;
    if (answer.status >= 200 && answer.status <= 299) return { kind: 'deleted' };
    const error = graphErrorOf(answer.body);
    if (answer.status === 404 || (error?.code === 100 && error.error_subcode === 33))
      return { kind: 'deleted' };
    return toDeleteOutcome(this.#failed(answer));
  }

  /**
   * Meta's "mark as read" (and typing indicator): POST /{phone-number-id}/messages with
   * `status: read` and the customer's message's wamid; Meta answers {success: true}. A lost answer
   * is a retry: marking a message read twice changes nothing (a second typing indicator only
   * refreshes the first).
   */
  async markRead(message: { providerMessageId: string; typing: boolean }): Promise<MarkReadOutcome> {
    const path = `/${encodeURIComponent(this.#connection.phoneNumberId)}/messages`;
    const result = await this.#call('POST', path, {
      messaging_product: 'whatsapp',
      status: 'read',
      message_id: message.providerMessageId,
      ...(message.typing ? { typing_indicator: { type: 'text' } } : {}),
    });
    if (!result.answered) return toMarkReadOutcome(this.#noAnswer(result.reason));
    const { answer } = result;
    if (answer.status < 200 || answer.status > 299) return toMarkReadOutcome(this.#failed(answer));
    if (!isRecord(answer.body) || answer.body.success !== true) {
      return toMarkReadOutcome(this.#unreadable(answer, 'without success'));
    }
    return { kind: 'marked' };
  }

  /**
   * One page of the WABA's templates (GET /{waba-id}/message_templates), from the cursor `after`
   * (the first page without one). The caller follows the page's `after` until it is null.
   */
  async listTemplatePage(after: string | null, limit: number): Promise<TemplatePageOutcome> {
    const query = new URLSearchParams({ fields: TEMPLATE_FIELDS, limit: String(limit) });
    if (after) query.set('after', after);
    const path = `/${encodeURIComponent(this.#connection.businessAccountId)}/message_templates?${query}`;
    const result = await this.#call('GET', path);
    const failed = (failure: ClassifiedFailure): TemplatePageOutcome => ({
      kind: failure.retry ? 'retry' : 'rejected',
      error: failure.error,
    });
    if (!result.answered) return failed(this.#noAnswer(result.reason));
    const { answer } = result;
    if (answer.status < 200 || answer.status > 299) return failed(this.#failed(answer));
    const page = readTemplatePage(answer.body);
    if (!page) return failed(this.#unreadable(answer, 'without a list of templates'));
    return { kind: 'page', page };
  }

  /**
   * Reads the number's display number, verified name, throughput, messaging limit tier and quality
   * rating: a check of the credentials, what campaigns pace by, and how Meta rates the number.
   */
  async fetchPhoneNumber(): Promise<PhoneNumberCheck> {
    const fields = 'display_phone_number,verified_name,throughput,messaging_limit_tier,quality_rating';
    const path = `/${encodeURIComponent(this.#connection.phoneNumberId)}?fields=${fields}`;
    const result = await this.#call('GET', path);
    const failed = (failure: ClassifiedFailure): PhoneNumberCheck => ({
      ok: false,
      error: failure.error,
      retryable: failure.retry,
    });
    if (!result.answered) return failed(this.#noAnswer(result.reason));
    const { answer } = result;
    if (answer.status < 200 || answer.status > 299) return failed(this.#failed(answer));
    const body = isRecord(answer.body) ? answer.body : {};
    if (typeof body.display_phone_number !== 'string') {
      return failed(this.#unreadable(answer, 'without display_phone_number'));
    }
    return {
      ok: true,
      displayPhoneNumber: body.display_phone_number,
      verifiedName: typeof body.verified_name === 'string' ? body.verified_name : '',
      throughputLevel:
        isRecord(body.throughput) && typeof body.throughput.level === 'string' ? body.throughput.level : null,
      messagingLimitTier: typeof body.messaging_limit_tier === 'string' ? body.messaging_limit_tier : null,
      qualityRating: typeof body.quality_rating === 'string' ? body.quality_rating : null,
    };
  }

  async #call(method: 'GET' | 'POST' | 'DELETE', path: string, json?: unknown): Promise<CallResult> {
    const { graphUrl, accessToken, timeoutMs } = this.#connection;
    const headers: Record<string, string> = {
      authorization: `Bearer ${accessToken}`,
      accept: 'application/json',
    };
    if (json !== undefined) headers['content-type'] = 'application/json';
    return exchangeJson(`${graphUrl}${path}`, {
      method,
      headers,
      body: json === undefined ? undefined : JSON.stringify(json),
      dispatcher: this.#dispatcher,
      timeoutMs,
    });
  }

  #failed(answer: Answer): ClassifiedFailure {
    return this.#redacted(classifyAnswer(answer.status, answer.body, answer.retryAfterSeconds));
  }

  #noAnswer(reason: string): ClassifiedFailure {
    return this.#redacted(classifyNoAnswer(reason));
  }

  /** A 2xx we cannot use: classified like any answer without a Graph error (try again). */
  #unreadable(answer: Answer, what: string): ClassifiedFailure {
    const failure = classifyAnswer(answer.status, null, answer.retryAfterSeconds);
    failure.error.message = `the WhatsApp Cloud API answered HTTP ${answer.status} ${what}`;
    return this.#redacted(failure);
  }

  // Meta does not echo tokens, but nothing it or the network says may carry ours into storage.
  #redacted(failure: ClassifiedFailure): ClassifiedFailure {
    const token = this.#connection.accessToken;
    if (token && failure.error.message.includes(token)) {
      failure.error.message = trimMessage(failure.error.message.split(token).join('[redacted]'));
    }
    return failure;
  }
}

function toMarkReadOutcome(failure: ClassifiedFailure): MarkReadOutcome {
  return failure.retry ? { kind: 'retry', error: failure.error } : { kind: 'rejected', error: failure.error };
}

function toDeleteOutcome(failure: ClassifiedFailure): DeleteOutcome {
  return failure.retry ? { kind: 'retry', error: failure.error } : { kind: 'rejected', error: failure.error };
}
