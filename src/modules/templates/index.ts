// The face of templates: what other modules and app.ts may use of it, by name. The rest of the folder
// is its own; docs/architecture.md § The stack says which modules may import it.
export { ApprovedTemplates } from './approved.ts';
export { applyTemplateCategory, applyTemplateQuality } from './meta.ts';
export type { TemplateRow } from './repo.ts';
export { findTemplate, findTemplateByName, toDefinition } from './repo.ts';
export { templateReviewJob } from './review-job.ts';
export { templateRoutes } from './routes.ts';
export { buttonPayloadIssues, namedParameterIssues, renderNamedBody } from './send-rules.ts';
export { applyTemplateStatus } from './service.ts';
export { startTemplateSyncs, templateSyncJob } from './sync-job.ts';
