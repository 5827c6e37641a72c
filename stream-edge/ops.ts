// The ops endpoints (/metrics, /healthz, /readyz) on the stream port, and the edge's counters as
// Prometheus families. Answered before the handshake logic: no key, no request budget.
import type { TemplatedApp } from 'uWebSockets.js';
import type { Metrics } from '../core/metrics.ts';
import { OPS_PATHS, type Ops } from '../query-api/ops-routes.ts';

export function mountOps(app: TemplatedApp, ops: Ops): void {
  for (const path of OPS_PATHS) {
    app.get(path, (res, req) => {
      let aborted = false;
      res.onAborted(() => {
        aborted = true;
      });
      void ops.handle(req.getMethod().toUpperCase(), path)!.then((answer) => {
        if (aborted) return;
        res.cork(() => {
          res.writeStatus(answer.status === 200 ? '200 OK' : `${answer.status} Service Unavailable`);
          res.writeHeader('Content-Type', answer.contentType);
          res.writeHeader('Cache-Control', 'no-store');
          res.end(answer.body);
        });
      });
    });
  }
}

/** Reads the edge's counters on every scrape. */
/** What the edge counts (its stats(), read by the metrics collector). */
export interface StreamEdgeStats {
  connections: number;
  subscriptions: number;
  /** Frames held by the edge for all connections, not yet handed to a socket. */
  framesQueued: number;
  framesSent: number;
  updatesSent: number;
  messagesRouted: number;
  messagesInvalid: number;
  backpressureCloses: number;
}

export function trackStreamStats(metrics: Metrics, stats: () => StreamEdgeStats): void {
  const { families } = metrics;
  metrics.onCollect(() => {
    const s = stats();
    families.streamConnections.set(s.connections);
    families.streamSubscriptions.set(s.subscriptions);
    families.streamFramesSent.reset();
    families.streamFramesSent.inc(s.framesSent);
    families.streamBackpressureCloses.reset();
    families.streamBackpressureCloses.inc(s.backpressureCloses);
  });
}
