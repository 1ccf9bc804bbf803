// Prometheus metrics at /metrics. Each app has its own registry, so several apps in one process
// (tests) never share or clash over counters.
import type { FastifyInstance } from 'fastify';
import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';
import { RequestSeries } from './request-series.ts';

export class Metrics {
  readonly registry = new Registry();
  /** Requests answered, and how long each took, by method, route and status (request-series.ts). */
  readonly requests = new RequestSeries(
    this.registry,
    { count: 'tidings_http_requests_total', duration: 'tidings_http_request_duration_seconds' },
    {
      count: 'HTTP requests answered, by method, route and status',
      duration: 'Time to answer HTTP requests, by method, route and status',
    },
    [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  );

  readonly webhookAttempts = new Counter({
    name: 'tidings_webhook_attempts_total',
    help: 'Webhook delivery attempts, by what the delivery became: succeeded, retrying or failed',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly webhookLatency = new Histogram({
    name: 'tidings_webhook_attempt_duration_seconds',
    help: 'Time from sending a webhook to its answer (or failure), by outcome',
    labelNames: ['outcome'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  readonly callbackEntriesDropped = new Counter({
    name: 'tidings_callback_entries_dropped_total',
    help: "Provider callback entries stored nowhere: for another number than the URL's account (other_number, other_business_account), for no account of the app's partner (unknown_number), or for several (ambiguous)",
    labelNames: ['provider', 'reason'] as const,
    registers: [this.registry],
  });

  readonly retentionDeleted = new Counter({
    name: 'tidings_retention_deleted_total',
    help: 'Rows deleted by the hourly retention prune, by table',
    labelNames: ['table'] as const,
    registers: [this.registry],
  });

  constructor(withProcessMetrics = true) {
    if (withProcessMetrics) collectDefaultMetrics({ register: this.registry, prefix: 'tidings_' });
  }
}

export function installMetrics(app: FastifyInstance, metrics: Metrics): void {
  app.addHook('onResponse', (request, reply, done) => {
    // The route pattern, not the URL: ids in URLs would make a series per resource.
    metrics.requests.record(
      request.method,
      request.routeOptions.url ?? 'unmatched',
      reply.statusCode,
      reply.elapsedTime / 1000,
    );
    done();
  });
}
