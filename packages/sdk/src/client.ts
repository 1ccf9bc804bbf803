// The client: one Transport (auth, retries, idempotency) and a property per resource.
import { type TidingsOptions, Transport } from './http.ts';
import { Account } from './resources/account.ts';
import { Bulk } from './resources/bulk.ts';
import { Calls } from './resources/calls.ts';
import { Campaigns } from './resources/campaigns.ts';
import { CannedResponses } from './resources/canned-responses.ts';
import { Console } from './resources/console.ts';
import { Contacts } from './resources/contacts.ts';
import { Conversations } from './resources/conversations.ts';
import { Events } from './resources/events.ts';
import { JourneyConfigs } from './resources/journey-configs.ts';
import { Journeys } from './resources/journeys.ts';
import { Keys } from './resources/keys.ts';
import { Media } from './resources/media.ts';
import { Messages } from './resources/messages.ts';
import { Partner } from './resources/partner.ts';
import { Rules } from './resources/rules.ts';
import { Sandbox } from './resources/sandbox.ts';
import { Sequences } from './resources/sequences.ts';
import { SlaPolicies } from './resources/sla-policies.ts';
import { Team } from './resources/team.ts';
import { Teams } from './resources/teams.ts';
import { Templates } from './resources/templates.ts';
import { VoiceCampaigns } from './resources/voice-campaigns.ts';
import { VoiceScripts } from './resources/voice-scripts.ts';
import { Webhooks } from './resources/webhooks.ts';
import type { AnswerOf, HttpMethod, PathsFor, RequestInit } from './types.ts';

export class Tidings {
  readonly #transport: Transport;
  readonly account: Account;
  readonly messages: Messages;
  readonly contacts: Contacts;
  readonly templates: Templates;
  readonly conversations: Conversations;
  readonly cannedResponses: CannedResponses;
  readonly teams: Teams;
  readonly slaPolicies: SlaPolicies;
  readonly webhooks: Webhooks;
  readonly events: Events;
  readonly bulk: Bulk;
  readonly team: Team;
  readonly rules: Rules;
  readonly sequences: Sequences;
  readonly journeys: Journeys;
  readonly journeyConfigs: JourneyConfigs;
  readonly voiceScripts: VoiceScripts;
  readonly calls: Calls;
  readonly voiceCampaigns: VoiceCampaigns;
  readonly campaigns: Campaigns;
  readonly media: Media;
  readonly sandbox: Sandbox;
  readonly partner: Partner;
  /** The console's sign-in: sessions (cookie) and invitations. */
  readonly console: Console;
  /** The account's own API keys. */
  readonly keys: Keys;

  constructor(options: TidingsOptions) {
    const t = new Transport(options);
    this.#transport = t;
    this.account = new Account(t);
    this.messages = new Messages(t);
    this.contacts = new Contacts(t);
    this.templates = new Templates(t);
    this.conversations = new Conversations(t);
    this.cannedResponses = new CannedResponses(t);
    this.teams = new Teams(t);
    this.slaPolicies = new SlaPolicies(t);
    this.webhooks = new Webhooks(t);
    this.events = new Events(t);
    this.bulk = new Bulk(t);
    this.team = new Team(t);
    this.rules = new Rules(t);
    this.sequences = new Sequences(t);
    this.journeys = new Journeys(t);
    this.journeyConfigs = new JourneyConfigs(t);
    this.voiceScripts = new VoiceScripts(t);
    this.calls = new Calls(t);
    this.voiceCampaigns = new VoiceCampaigns(t);
    this.campaigns = new Campaigns(t);
    this.media = new Media(t);
    this.sandbox = new Sandbox(t);
    this.partner = new Partner(t);
    this.console = new Console(t);
    this.keys = new Keys(t);
  }

  /** The options this client was made with. */
  get options(): Readonly<TidingsOptions> {
    return this.#transport.options;
  }

  /**
   * A client of the same configuration acting on one account (X-Account-Id): how a partner key
   * calls the account endpoints of the accounts it provisioned.
   */
  forAccount(accountId: string): Tidings {
    return new Tidings({ ...this.#transport.options, accountId });
  }

  /**
   * Any operation of the API document, typed by its path and method:
   * `request('get', '/api/v1/public/contacts/{id}', { params: { id } })`.
   */
  request<M extends HttpMethod, P extends PathsFor<M>>(
    method: M,
    path: P,
    // biome-ignore lint/complexity/noBannedTypes: an init with no required key may be left out
    ...init: {} extends RequestInit<M, P> ? [init?: RequestInit<M, P>] : [init: RequestInit<M, P>]
  ): Promise<AnswerOf<M, P>> {
    return this.#transport.request(method, path, ...init);
  }
}
