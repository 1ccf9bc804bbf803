import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { accountOf, ON_RESOURCE, ON_RESOURCE_OR_CONFLICT } from '../../kernel/access/access.ts';
import type { KernelContext } from '../../kernel/context.ts';
import { listOf, pageOf, readPage } from '../../kernel/http/pagination.ts';
import { type ContactListParams, contactFilters } from './filters.ts';
import { listContacts } from './repo.ts';
import {
  ContactIdParams,
  ContactListQuery,
  ContactSchema,
  ContactTagParams,
  CreateContactBody,
  EraseQuery,
  ReplaceContactBody,
  TagsBody,
  toContact,
  UpdateContactBody,
} from './schemas.ts';
import {
  addTags,
  type ContactServices,
  createContact,
  eraseContact,
  getContact,
  removeContact,
  removeTag,
  replaceContact,
  updateContact,
} from './service.ts';

export function contactRoutes(ctx: KernelContext): FastifyPluginAsyncTypebox {
  const s: ContactServices = ctx;
  const tags = ['contacts'];
  const found = ON_RESOURCE;
  const foundOrConflict = ON_RESOURCE_OR_CONFLICT;

  return async (app) => {
    app.post(
      '/contacts',
      {
        config: { agents: true, access: 'account', errors: ['CONFLICT'] },
        schema: {
          tags,
          operationId: 'createContact',
          summary: 'Create a contact (409 with the existing contact id if the phone is taken)',
          body: CreateContactBody,
          response: { 201: ContactSchema },
        },
      },
      async (request, reply) => {
        const row = await createContact(s, accountOf(request), request.body);
        reply.status(201);
        return toContact(row);
      },
    );

    app.get(
      '/contacts',
      {
        config: { agents: true, access: 'account' },
        schema: {
          tags,
          operationId: 'listContacts',
          summary: 'List and search contacts, newest first',
          description:
            'Filters combine (all must hold). `attributes[name]=value` matches an attribute equal to the value, read as a string, number or boolean.',
          querystring: ContactListQuery,
          response: { 200: listOf(ContactSchema) },
        },
      },
      async (request) => {
        const account = accountOf(request);
        const page = readPage(request.query);
        const filters = contactFilters(request.query as ContactListParams, account.countryCode);
        return pageOf(await listContacts(ctx.db, account.id, page, filters), page, toContact);
      },
    );

    app.get(
      '/contacts/:id',
      {
        config: { ...found, agents: true },
        schema: {
          tags,
          operationId: 'getContact',
          summary: 'Get a contact',
          params: ContactIdParams,
          response: { 200: ContactSchema },
        },
      },
      async (request) => toContact(await getContact(s, accountOf(request).id, request.params.id)),
    );

    app.patch(
      '/contacts/:id',
      {
        config: { ...foundOrConflict, agents: true },
        schema: {
          tags,
          operationId: 'updateContact',
          summary: 'Change some fields of a contact',
          params: ContactIdParams,
          body: UpdateContactBody,
          response: { 200: ContactSchema },
        },
      },
      async (request) =>
        toContact(await updateContact(s, accountOf(request), request.params.id, request.body)),
    );

    app.put(
      '/contacts/:id',
      {
        config: { ...foundOrConflict, agents: true },
        schema: {
          tags,
          operationId: 'replaceContact',
          summary: 'Replace a contact whole',
          params: ContactIdParams,
          body: ReplaceContactBody,
          response: { 200: ContactSchema },
        },
      },
      async (request) =>
        toContact(await replaceContact(s, accountOf(request), request.params.id, request.body)),
    );

    app.delete(
      '/contacts/:id',
      {
        config: { ...found, agents: true },
        schema: {
          tags,
          operationId: 'deleteContact',
          summary: 'Delete a contact; with erase=true, also erase its personal data everywhere',
          description:
            'Without `erase`, the contact goes and its history (messages, conversations, events) stays, naming its number. ' +
            'With `erase=true` the personal data goes from every table in the same transaction: messages keep their ids, ' +
            "statuses, times and prices but lose their content and number (shown as `erased`), the customer's files are deleted, " +
            'events about the contact keep their envelope with `data: {"erased": true}`, runs of automation are ended and ' +
            "cleared, and the ledger's descriptions lose the number (amounts stay). Work under way for the contact writes " +
            'nothing of it afterwards: queued messages and calls fail `CONTACT_ERASED`, answers to requests already sent ' +
            'are not kept. A `contact.erased` event names only the id. Irreversible; the number writing in again makes a ' +
            'new contact (docs/operations.md, Erasure).',
          params: ContactIdParams,
          querystring: EraseQuery,
          response: { 204: Type.Null({ description: 'Deleted.' }) },
        },
      },
      async (request, reply) => {
        if (request.query.erase) await eraseContact(s, accountOf(request).id, request.params.id);
        else await removeContact(s, accountOf(request).id, request.params.id);
        reply.status(204);
      },
    );

    app.post(
      '/contacts/:id/tags',
      {
        config: { ...found, agents: true },
        schema: {
          tags,
          operationId: 'tagContact',
          summary: 'Add tags to a contact (tags it already carries are ignored)',
          params: ContactIdParams,
          body: TagsBody,
          response: { 200: ContactSchema },
        },
      },
      async (request) =>
        toContact(await addTags(s, accountOf(request).id, request.params.id, request.body.tags)),
    );

    app.delete(
      '/contacts/:id/tags/:tag',
      {
        config: { ...found, agents: true },
        schema: {
          tags,
          operationId: 'untagContact',
          summary: 'Remove a tag from a contact (204 also when it did not carry it)',
          params: ContactTagParams,
          response: { 204: Type.Null({ description: 'The contact does not carry the tag.' }) },
        },
      },
      async (request, reply) => {
        await removeTag(s, accountOf(request).id, request.params.id, request.params.tag);
        reply.status(204);
      },
    );
  };
}
