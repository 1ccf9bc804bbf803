// /voice/scripts: what a call says, as text-to-speech or an IVR menu (docs/voice.md § Scripts).
// Plans from Business up.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { accountOf, ON_RESOURCE } from '../../kernel/access/access.ts';
import type { KernelContext } from '../../kernel/context.ts';
import { listOf, pageOf, readPage } from '../../kernel/http/pagination.ts';
import { listScripts } from './repo.ts';
import {
  CreateScriptBody,
  ScriptIdParams,
  ScriptListQuery,
  ScriptSchema,
  toScript,
  UpdateScriptBody,
} from './schemas.ts';
import {
  createScript,
  getScript,
  patchScript,
  publishScript,
  removeScript,
  type ScriptInput,
} from './service.ts';

export function voiceScriptRoutes(ctx: KernelContext): FastifyPluginAsyncTypebox {
  const tags = ['voice'];
  const account = { access: 'account', feature: 'voice' } as const;
  const found = { ...ON_RESOURCE, feature: 'voice' } as const;

  return async (app) => {
    app.post(
      '/voice/scripts',
      {
        config: { ...account, errors: ['CONFLICT'] },
        schema: {
          tags,
          operationId: 'createVoiceScript',
          summary: 'Create a voice script (a draft): text-to-speech, or an IVR menu',
          description:
            'Every field is checked now; the IVR graph when it is published. The answer holds `signingSecret` (its webhook actions sign with it, as webhook deliveries are signed), shown this once.',
          body: CreateScriptBody,
          response: { 201: ScriptSchema },
        },
      },
      async (request, reply) => {
        const { signingSecret, ...row } = await createScript(
          ctx,
          accountOf(request).id,
          request.body as ScriptInput,
        );
        reply.status(201);
        return { ...toScript(row), signingSecret };
      },
    );

    app.get(
      '/voice/scripts',
      {
        config: account,
        schema: {
          tags,
          operationId: 'listVoiceScripts',
          summary: 'List voice scripts, newest first',
          querystring: ScriptListQuery,
          response: { 200: listOf(ScriptSchema) },
        },
      },
      async (request) => {
        const page = readPage(request.query);
        return pageOf(await listScripts(ctx.db, accountOf(request).id, page, request.query), page, toScript);
      },
    );

    app.get(
      '/voice/scripts/:id',
      {
        config: found,
        schema: {
          tags,
          operationId: 'getVoiceScript',
          summary: 'Get a voice script, with its published TwiML',
          params: ScriptIdParams,
          response: { 200: ScriptSchema },
        },
      },
      async (request) => toScript(await getScript(ctx.db, accountOf(request).id, request.params.id)),
    );

    app.patch(
      '/voice/scripts/:id',
      {
        config: { ...found, errors: ['CONFLICT'] },
        schema: {
          tags,
          operationId: 'updateVoiceScript',
          summary:
            'Change a voice script: a draft in place; a published one is checked as a publish is and becomes its next version',
          params: ScriptIdParams,
          body: UpdateScriptBody,
          response: { 200: ScriptSchema },
        },
      },
      async (request) =>
        toScript(
          await patchScript(
            ctx,
            accountOf(request).id,
            request.params.id,
            request.body as Partial<ScriptInput>,
          ),
        ),
    );

    app.post(
      '/voice/scripts/:id/publish',
      {
        config: { ...found, errors: ['CONFLICT'] },
        schema: {
          tags,
          operationId: 'publishVoiceScript',
          summary:
            'Publish a draft: its IVR graph is checked (400 with a details entry per faulty node) and its TwiML built',
          params: ScriptIdParams,
          response: { 200: ScriptSchema },
        },
      },
      async (request) => toScript(await publishScript(ctx, accountOf(request).id, request.params.id)),
    );

    app.delete(
      '/voice/scripts/:id',
      {
        config: { ...found, errors: ['CONFLICT'] },
        schema: {
          tags,
          operationId: 'deleteVoiceScript',
          summary:
            'Delete a draft; a published script is archived (its versions stay for the calls that played them)',
          params: ScriptIdParams,
          response: { 204: Type.Null({ description: 'Deleted, or archived.' }) },
        },
      },
      async (request, reply) => {
        await removeScript(ctx, accountOf(request).id, request.params.id);
        reply.status(204);
      },
    );
  };
}
