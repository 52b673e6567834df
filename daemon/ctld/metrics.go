package ctld

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/sharq-hpc/sharq/api"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are the controller's Prometheus series, on their own registry.
type metrics struct {
	reg          *prometheus.Registry
	quota        *prometheus.GaugeVec
	inUse        *prometheus.GaugeVec
	borrowed     *prometheus.GaugeVec
	lent         *prometheus.GaugeVec
	pending      *prometheus.GaugeVec
	running      *prometheus.GaugeVec
	fairUsage    *prometheus.GaugeVec
	preemptions  *prometheus.CounterVec
	submitted    prometheus.Counter
	passSeconds  prometheus.Histogram
	spoolWrite   prometheus.Histogram
	startLatency prometheus.Histogram
	// Pending jobs by share and reason, nodes' state, failed spool writes.
	pendingReason *prometheus.GaugeVec
	nodeUp        *prometheus.GaugeVec
	runtimeDrains prometheus.Counter
	unhealthyGPUs *prometheus.GaugeVec
	idleGPUs      *prometheus.GaugeVec
	idleStops     *prometheus.CounterVec
	spoolErrors   prometheus.Counter
	// The job history writer.
	historyQueue   prometheus.Gauge
	historyErrors  prometheus.Counter
	historyRecords prometheus.Counter
	historyWrite   prometheus.Histogram
}

func newMetrics() *metrics {
	share := []string{"share"}
	gv := func(name, help string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "sharq", Name: name, Help: help}, share)
	}
	m := &metrics{
		reg:      prometheus.NewRegistry(),
		quota:    gv("share_quota_gpus", "GPUs guaranteed to the share."),
		inUse:    gv("share_used_gpus", "GPUs held by the share's jobs."),
		borrowed: gv("share_borrowed_gpus", "GPUs the share uses beyond its quota."),
		lent:     gv("share_lent_gpus", "The share's idle quota that other shares use."),
		pending:  gv("share_pending_jobs", "Pending jobs of the share."),
		running:  gv("share_running_jobs", "Running jobs of the share."),
		fairUsage: gv("share_fair_usage_gpu_seconds",
			"The share's borrowed GPU-seconds, decayed with usage_half_life: what fair share orders borrowers by."),
		preemptions: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "sharq", Name: "preemptions_total",
			Help: "Jobs preempted, by the victim's share and kind (cross_share, in_share, fair_share)."}, []string{"share", "kind"}),
		submitted: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "sharq", Name: "jobs_submitted_total", Help: "Jobs accepted."}),
		passSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: "sharq", Name: "schedule_pass_seconds",
			Help: "Duration of one scheduling pass.", Buckets: prometheus.ExponentialBuckets(1e-5, 4, 10)}),
		spoolWrite: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: "sharq", Name: "spool_write_seconds",
			Help: "Duration of one synced spool write (a batch of changes).", Buckets: prometheus.ExponentialBuckets(1e-4, 4, 8)}),
		startLatency: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: "sharq", Name: "submit_to_start_seconds",
			Help: "Time from submission to (each) start of a job.", Buckets: prometheus.ExponentialBuckets(0.01, 4, 12)}),
	}
	m.historyQueue = prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "sharq", Name: "history_queued_records",
		Help: "Finished jobs waiting to be written to the job history."})
	m.historyErrors = prometheus.NewCounter(prometheus.CounterOpts{Namespace: "sharq", Name: "history_errors_total",
		Help: "Failed job history opens and writes (they are retried)."})
	m.historyRecords = prometheus.NewCounter(prometheus.CounterOpts{Namespace: "sharq", Name: "history_records_total",
		Help: "Finished jobs written to the job history."})
	m.historyWrite = prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: "sharq", Name: "history_write_seconds",
		Help: "Duration of one job history write (a batch of records and samples).", Buckets: prometheus.ExponentialBuckets(1e-4, 4, 9)})
	m.reg.MustRegister(m.historyQueue, m.historyErrors, m.historyRecords, m.historyWrite)
	m.pendingReason = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "sharq", Name: "pending_jobs",
		Help: "Pending jobs by share and the reason qstat shows."}, []string{"share", "reason"})
	m.nodeUp = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "sharq", Name: "node_up",
		Help: "1 when the node is up (connected, not timed out), else 0; drained nodes are up."}, []string{"node", "partition"})
	m.spoolErrors = prometheus.NewCounter(prometheus.CounterOpts{Namespace: "sharq", Name: "spool_write_errors_total",
		Help: "Failed spool writes (the controller stops after one; a restart recovers)."})
	m.runtimeDrains = prometheus.NewCounter(prometheus.CounterOpts{Namespace: "sharq", Name: "node_runtime_drains_total",
		Help: "Nodes drained because their container runtime failed to start jobs (RuntimeFailing in sharqctl show nodes)."})
	m.unhealthyGPUs = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "sharq", Name: "node_unhealthy_gpus",
		Help: "GPUs of the node fenced for a fault its node daemon found (Xid, ECC, row remap, lost): no new job gets them until sharqctl node resume."}, []string{"node", "partition"})
	m.idleGPUs = gv("share_idle_gpus", "GPUs held by the share's running jobs whose GPUs were below 5% use at their last sample.")
	m.idleStops = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "sharq", Name: "idle_stops_total",
		Help: "Jobs stopped by their partition's idle_action, by share and action (requeue, stop)."}, []string{"share", "action"})
	m.reg.MustRegister(m.pendingReason, m.nodeUp, m.spoolErrors, m.runtimeDrains, m.unhealthyGPUs, m.idleGPUs, m.idleStops)
	m.reg.MustRegister(m.quota, m.inUse, m.borrowed, m.lent, m.pending, m.running, m.fairUsage, m.preemptions, m.submitted,
		m.passSeconds, m.spoolWrite, m.startLatency,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// updateShareMetrics copies the core's per-share standing into the gauges.
func (c *Controller) updateShareMetrics() {
	for _, u := range c.core.Shares() {
		c.met.quota.WithLabelValues(u.Share).Set(float64(u.Quota))
		c.met.inUse.WithLabelValues(u.Share).Set(float64(u.InUse))
		c.met.borrowed.WithLabelValues(u.Share).Set(float64(u.Borrowed))
		c.met.lent.WithLabelValues(u.Share).Set(float64(u.Lent))
		c.met.pending.WithLabelValues(u.Share).Set(float64(u.Pending))
		c.met.running.WithLabelValues(u.Share).Set(float64(u.Running))
		c.met.fairUsage.WithLabelValues(u.Share).Set(u.FairUsage)
	}
}

// jobMetricsEvery is how often the per-reason pending counts and node
// states are recomputed (a walk over every job).
const jobMetricsEvery = 5 * time.Second

// updateJobMetrics sets pending jobs by share and reason and node states.
// A share and reason that has no pending job any more reads 0.
func (c *Controller) updateJobMetrics(now time.Time) {
	c.lastJobMetrics = now
	counts := map[[2]string]int{}
	for _, j := range c.jobs {
		if j.finished() || j.running() || j.State == api.StateArray {
			continue
		}
		reason := j.Reason
		if reason == "" {
			reason = "None"
		}
		counts[[2]string{j.Share, reason}]++
	}
	for k := range c.pendingSeen {
		if _, ok := counts[k]; !ok {
			c.met.pendingReason.WithLabelValues(k[0], k[1]).Set(0)
		}
	}
	for k, n := range counts {
		c.met.pendingReason.WithLabelValues(k[0], k[1]).Set(float64(n))
		c.pendingSeen[k] = true
	}
	for _, n := range c.core.Nodes() {
		up := 0.0
		if cn := c.nodes[n.Name]; n.Up && (cn == nil || !cn.silent) {
			up = 1 // a silent node is down, though the core still holds its jobs
		}
		c.met.nodeUp.WithLabelValues(n.Name, n.Partition).Set(up)
		c.met.unhealthyGPUs.WithLabelValues(n.Name, n.Partition).Set(float64(len(c.core.FencedGPUs(n.Name))))
	}
	c.updateIdleMetrics()
}

func (m *metrics) serve(ctx context.Context, l net.Listener) error {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { <-ctx.Done(); srv.Close() }()
	if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
