import { type Body, type CallOptions, Resource } from './base.ts';

/** Bulk jobs: contact imports, message batches, and the enrollment jobs of sequences. */
export class Bulk extends Resource {
  importContacts(body: Body<'post', '/api/v1/public/bulk/contacts'>, opts?: CallOptions) {
    return this.t.request('post', '/api/v1/public/bulk/contacts', { body, ...opts });
  }
  getContactImport(jobId: string, opts?: CallOptions) {
    return this.t.request('get', '/api/v1/public/bulk/contacts/{jobId}', { params: { jobId }, ...opts });
  }
  sendMessages(body: Body<'post', '/api/v1/public/bulk/messages'>, opts?: CallOptions) {
    return this.t.request('post', '/api/v1/public/bulk/messages', { body, ...opts });
  }
  getMessageJob(jobId: string, opts?: CallOptions) {
    return this.t.request('get', '/api/v1/public/bulk/messages/{jobId}', { params: { jobId }, ...opts });
  }
  getEnrollmentJob(jobId: string, opts?: CallOptions) {
    return this.t.request('get', '/api/v1/public/bulk/enrollments/{jobId}', { params: { jobId }, ...opts });
  }
}
