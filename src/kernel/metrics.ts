// Prometheus metrics at /metrics. Each app has its own registry, so several apps in one process
// (tests) never share or clash over counters.
import type { FastifyInstance } from 'fastify';
import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';

export class Metrics {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: 'tidings_http_requests_total',
    help: 'HTTP requests answered, by method, route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  readonly latency = new Histogram({
    name: 'tidings_http_request_duration_seconds',
    help: 'Time to answer HTTP requests, by method, route and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });

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
    const labels = {
      method: request.method,
      route: request.routeOptions.url ?? 'unmatched',
      status: String(reply.statusCode),
    };
    metrics.requests.inc(labels);
    metrics.latency.observe(labels, reply.elapsedTime / 1000);
    done();
  });
}
