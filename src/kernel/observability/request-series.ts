// The two series every answered request adds to (tidings_http_requests_total and
// tidings_http_request_duration_seconds, by method, route and status), counted in plain numbers on the
// request path and turned into prom-client's form only when /metrics is read.
// Why not prom-client's Counter.inc and Histogram.observe: each call builds a closure, validates the
// labels and hashes them into a string, about 4 µs a request together, a tenth of what a cached
// authenticated GET costs the server (docs/history/issue-27.md). Here a request costs one string
// concatenation, one Map lookup and a short loop over the bucket bounds.
// The two objects registered below are what prom-client's Registry reads from a metric (name, help,
// type, aggregator, get(), reset()); their values have the shape and label order of prom-client's
// own counter and histogram, so /metrics reads exactly as it did.
import type { Metric, Registry } from 'prom-client';

type Labels = { method: string; route: string; status: string };

interface Series {
  labels: Labels;
  count: number;
  sum: number;
  /** Answers per bucket, not cumulative: [i] counts those ≤ bounds[i] and > bounds[i - 1]. */
  perBucket: number[];
}

interface MetricValue {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

export class RequestSeries {
  private readonly series = new Map<string, Series>();
  private readonly bounds: readonly number[];

  constructor(
    registry: Registry,
    names: { count: string; duration: string },
    help: { count: string; duration: string },
    bounds: readonly number[],
  ) {
    this.bounds = bounds;
    const view = (
      name: string,
      helpText: string,
      type: 'counter' | 'histogram',
      values: () => MetricValue[],
    ) =>
      ({
        name,
        help: helpText,
        type,
        aggregator: 'sum',
        get: async () => ({ name, help: helpText, type, aggregator: 'sum', values: values() }),
        reset: () => this.series.clear(),
      }) as unknown as Metric;
    registry.registerMetric(view(names.count, help.count, 'counter', () => this.counts()));
    registry.registerMetric(
      view(names.duration, help.duration, 'histogram', () => this.durations(names.duration)),
    );
  }

  record(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${status} ${route}`;
    let series = this.series.get(key);
    if (!series) {
      series = {
        labels: { method, route, status: String(status) },
        count: 0,
        sum: 0,
        perBucket: this.bounds.map(() => 0),
      };
      this.series.set(key, series);
    }
    series.count++;
    series.sum += seconds;
    const bounds = this.bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (seconds <= bounds[i]!) {
        series.perBucket[i]!++;
        break;
      }
    }
  }

  private counts(): MetricValue[] {
    return [...this.series.values()].map((s) => ({ labels: { ...s.labels }, value: s.count }));
  }

  private durations(name: string): MetricValue[] {
    const values: MetricValue[] = [];
    for (const s of this.series.values()) {
      let cumulative = 0;
      this.bounds.forEach((le, i) => {
        cumulative += s.perBucket[i]!;
        values.push({ labels: { le, ...s.labels }, value: cumulative, metricName: `${name}_bucket` });
      });
      values.push({ labels: { le: '+Inf', ...s.labels }, value: s.count, metricName: `${name}_bucket` });
      values.push({ labels: { ...s.labels }, value: s.sum, metricName: `${name}_sum` });
      values.push({ labels: { ...s.labels }, value: s.count, metricName: `${name}_count` });
    }
    return values;
  }
}
