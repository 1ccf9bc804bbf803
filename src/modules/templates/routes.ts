import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Channels } from '../../channels/registry.ts';
import { accountOf, ON_RESOURCE, ON_RESOURCE_OR_CONFLICT } from '../../kernel/access/access.ts';
import type { KernelContext } from '../../kernel/context.ts';
import { listOf, pageOf, readPage } from '../../kernel/http/pagination.ts';
import type { ApprovedTemplates } from './approved.ts';
import { syncTemplates } from './meta-sync.ts';
import { listTemplates } from './repo.ts';
import {
  CreateTemplateBody,
  TemplateIdParams,
  TemplateListQuery,
  TemplateSchema,
  TemplateSyncSchema,
  templateSchemaErrors,
  toTemplate,
  UpdateTemplateBody,
} from './schemas.ts';
import {
  createTemplate,
  editTemplate,
  getTemplate,
  removeTemplate,
  replaceTemplate,
  submitTemplate,
  type TemplateServices,
} from './service.ts';

/** The kernel's context and the services these routes uses. */
export interface TemplatesContext extends KernelContext {
  approvedTemplates: ApprovedTemplates;
  channels: Channels;
}

export function templateRoutes(ctx: TemplatesContext): FastifyPluginAsyncTypebox {
  const s: TemplateServices = ctx;
  const tags = ['templates'];
  const found = ON_RESOURCE;
  const foundOrConflict = ON_RESOURCE_OR_CONFLICT;

  return async (app) => {
    app.post(
      '/templates',
      {
        config: { access: 'account', errors: ['CONFLICT'] },
        schemaErrorFormatter: templateSchemaErrors,
        schema: {
          tags,
          operationId: 'createTemplate',
          summary:
            'Create a template (a DRAFT; 409 with the existing template id if the name is taken in that language)',
          description:
            "Components follow the WhatsApp Cloud API's JSON and rules; every problem is reported at once in `details`, each with its field (e.g. `components[1].text`).",
          body: CreateTemplateBody,
          response: { 201: TemplateSchema },
        },
      },
      async (request, reply) => {
        const row = await createTemplate(s, accountOf(request).id, request.body);
        reply.status(201);
        return toTemplate(row);
      },
    );

    app.post(
      '/templates/sync',
      {
        config: { access: 'account', errors: ['CONFLICT', 'FORBIDDEN', 'SERVICE_UNAVAILABLE'] },
        schema: {
          tags,
          operationId: 'syncTemplates',
          summary: "Bring the account's templates in line with Meta's (WhatsApp Cloud API accounts)",
          description:
            "Reads every template of the account's WhatsApp Business Account from Meta (`GET /{waba-id}/message_templates`, page after page) and creates the ones Tidings lacks (with Meta's id) and updates the others (matched by Meta's id, else by name and language): status, category, components, quality score, parameter format, rejection reason. Changes emit `template.status_changed`, `template.category_changed` and `template.quality_changed` as Meta's callbacks would. Synchronous: every page is read first, then all is written in one transaction, so a Meta failure on any page leaves everything as it was: 503 with Retry-After when Meta could not answer, 409 with Meta's reason when it refused. A DRAFT here is left as it is (reported in `skipped`). On the sandbox channel there is no Meta: 200 with `provider: sandbox` and nothing changed. A sandbox key of a WhatsApp Cloud API account gets 403. The same sync runs every hour for every account on the WhatsApp Cloud API.",
          response: { 200: TemplateSyncSchema },
        },
      },
      async (request) => {
        const mode = request.principal?.mode ?? 'live';
        return syncTemplates(ctx, accountOf(request).id, mode);
      },
    );

    app.get(
      '/templates',
      {
        config: { agents: true, access: 'account' },
        schema: {
          tags,
          operationId: 'listTemplates',
          summary: 'List templates, newest first',
          description: 'Filters combine (all must hold).',
          querystring: TemplateListQuery,
          response: { 200: listOf(TemplateSchema) },
        },
      },
      async (request) => {
        const page = readPage(request.query);
        const { status, name, language, category } = request.query;
        const rows = await listTemplates(ctx.db, accountOf(request).id, page, {
          status,
          name,
          language,
          category,
        });
        return pageOf(rows, page, toTemplate);
      },
    );

    app.get(
      '/templates/:id',
      {
        config: { ...found, agents: true },
        schema: {
          tags,
          operationId: 'getTemplate',
          summary: 'Get a template',
          params: TemplateIdParams,
          response: { 200: TemplateSchema },
        },
      },
      async (request) => toTemplate(await getTemplate(s, accountOf(request).id, request.params.id)),
    );

    app.patch(
      '/templates/:id',
      {
        config: foundOrConflict,
        schemaErrorFormatter: templateSchemaErrors,
        schema: {
          tags,
          operationId: 'updateTemplate',
          summary: 'Change the category or components of a DRAFT or REJECTED template (409 otherwise)',
          description:
            'Components given replace the stored ones whole. A REJECTED template becomes a DRAFT again, without its rejection reason (emits `template.status_changed`).',
          params: TemplateIdParams,
          body: UpdateTemplateBody,
          response: { 200: TemplateSchema },
        },
      },
      async (request) =>
        toTemplate(await editTemplate(s, accountOf(request).id, request.params.id, request.body)),
    );

    app.put(
      '/templates/:id',
      {
        config: foundOrConflict,
        schemaErrorFormatter: templateSchemaErrors,
        schema: {
          tags,
          operationId: 'replaceTemplate',
          summary: 'Replace a DRAFT or REJECTED template whole (409 otherwise)',
          description:
            "The body of a create, checked by the same rules: every problem at once in `details`, each with its field. Every field is replaced; a REJECTED template becomes a DRAFT again, without its rejection reason, ready to be submitted again (emits `template.status_changed`). A new name and language taken by another template is 409 with that template's id; a template submitted to the WhatsApp Cloud API keeps its name and language (409: Meta edits only the category and components).",
          params: TemplateIdParams,
          body: CreateTemplateBody,
          response: { 200: TemplateSchema },
        },
      },
      async (request) =>
        toTemplate(await replaceTemplate(s, accountOf(request).id, request.params.id, request.body)),
    );

    app.delete(
      '/templates/:id',
      {
        config: {
          access: 'account',
          errors: ['RESOURCE_NOT_FOUND', 'CONFLICT', 'FORBIDDEN', 'SERVICE_UNAVAILABLE'],
        },
        schema: {
          tags,
          operationId: 'deleteTemplate',
          summary: 'Delete a template, whatever its status',
          description:
            "A template submitted to the WhatsApp Cloud API is deleted at Meta first (that language of it; a live key is needed, a sandbox key gets 403), then here. 503 with Retry-After when Meta cannot be reached, 409 with Meta's reason when it refuses: in both cases nothing changed. Meta does not let a deleted approved template's name be used again for 30 days.",
          params: TemplateIdParams,
          response: { 204: Type.Null({ description: 'Deleted.' }) },
        },
      },
      async (request, reply) => {
        const mode = request.principal?.mode ?? 'live';
        await removeTemplate(s, accountOf(request).id, request.params.id, mode);
        reply.status(204);
      },
    );

    app.post(
      '/templates/:id/submit',
      {
        config: {
          access: 'account',
          errors: ['RESOURCE_NOT_FOUND', 'CONFLICT', 'FORBIDDEN', 'SERVICE_UNAVAILABLE'],
        },
        schema: {
          tags,
          operationId: 'submitTemplate',
          summary: 'Submit a DRAFT or REJECTED template for review (409 otherwise)',
          description:
            "Goes to the provider a key of this kind sends through: the sandbox for sandbox keys and sandbox accounts (its decision follows after the account's `sandbox.reviewAfterMs`), the WhatsApp Cloud API for live keys of accounts configured for it. A sandbox key of a WhatsApp Cloud API account gets 403. Answers the template as recorded: usually PENDING, REJECTED if the provider refused it outright. 503 with Retry-After when the provider cannot be reached (nothing changed). The decision arrives as `template.status_changed`.",
          params: TemplateIdParams,
          response: { 200: TemplateSchema },
        },
      },
      async (request) => {
        const mode = request.principal?.mode ?? 'live';
        return toTemplate(await submitTemplate(s, accountOf(request).id, request.params.id, mode));
      },
    );
  };
}
