package mqttbridge

import (
	"context"
	"time"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/labelprinter/go-labelprinter/mqttbridge/sparkplug"
	"github.com/labelprinter/go-labelprinter/outbox"
)

// This file holds what a Sparkplug host sees of each printer: its metrics, their aliases and
// datatypes, the DBIRTH that declares them and the DDATA that reports a change (by exception:
// only what changed since the last message), and the quality that marks a value as stale (the
// last one known, while it cannot be read). A printer that stops answering gets a DDEATH and,
// once it answers again, a DBIRTH.

// Aliases: the node's own metrics, then each printer's in a block of its own, by its place in
// the configuration, so an alias names one metric across births and restarts.
const (
	aliasBdSeq       = 1
	aliasSoftware    = 2
	aliasDeviceBase  = 64
	aliasPerDevice   = 32
	qualityProperty  = "Quality"
	qualityGood      = 192
	qualityStale     = 500
	metricLastResult = "Command/LastResult"
	metricResults    = "Command/Results"
	// maxResults is how many outcomes Command/Results keeps.
	maxResults = 100
	// maxPending is how many outcomes of a printer wait for a DDATA at most (while the node
	// is not connected, or the printer is dead, say); past it the oldest leave, and the
	// DBIRTH's Command/Results has the last 100.
	maxPending = 1000
)

// spbMetric is one metric of a printer.
type spbMetric struct {
	name string
	dt   sparkplug.DataType
	// quality: the metric carries the Quality property (its value may be stale).
	quality bool
}

// The metrics a printer's snapshot holds, in the order of spbDeviceMetrics.
const (
	mState = iota
	mRAG
	mPrintable
	mReachable
	mReason
	mPrinted
	mTriggers
	mBounces
	mLabel
	mPending
	mUnknown
	mSnapshot // the metrics from here on are commands and their outcomes
	mCmdTrigger
	mCmdDeselect
	mCmdAbortPrint
	mCmdResend
	mCmdCancel
	mLastResult
	mResults
)

// spbDeviceMetrics are every printer's metrics: its state, then its commands (String JSON,
// declared empty so a host such as Ignition makes them writable tags) and their outcomes.
var spbDeviceMetrics = []spbMetric{
	mState:     {"Status/State", sparkplug.String, true},
	mRAG:       {"Status/RAG", sparkplug.String, true},
	mPrintable: {"Status/Printable", sparkplug.Boolean, true},
	mReachable: {"Status/Reachable", sparkplug.Boolean, true},
	mReason:    {"Status/Reason", sparkplug.String, false},
	mPrinted:   {"Counters/PrintedLabels", sparkplug.Int64, true},
	mTriggers:  {"Counters/Triggers", sparkplug.Int64, true},
	mBounces:   {"Counters/TriggerBounces", sparkplug.Int64, true},
	mLabel:     {"Job/Label", sparkplug.String, true},
	mPending:   {"Outbox/Pending", sparkplug.Int64, false},
	mUnknown:   {"Outbox/Unknown", sparkplug.Int64, false},
	// mSnapshot is the first command.
	mSnapshot:      {spbPrintJob, sparkplug.String, false},
	mCmdTrigger:    {spbTrigger, sparkplug.String, false},
	mCmdDeselect:   {spbDeselect, sparkplug.String, false},
	mCmdAbortPrint: {spbAbortPrint, sparkplug.String, false},
	mCmdResend:     {spbResend, sparkplug.String, false},
	mCmdCancel:     {spbCancel, sparkplug.String, false},
	mLastResult:    {metricLastResult, sparkplug.String, false},
	mResults:       {metricResults, sparkplug.DataSetType, false},
}

// spbDevice is one printer as a Sparkplug device (its id is the printer's name).
type spbDevice struct {
	p     *printer
	index int // its place in the configuration
	// The node's goroutine's own: whether its DBIRTH is out (and no DDEATH after it), and the
	// values that went out last.
	born bool
	last []spbValue
}

func (d *spbDevice) alias(j int) uint64 {
	return aliasDeviceBase + uint64(d.index)*aliasPerDevice + uint64(j)
}

// spbValue is one metric's value: a string, a bool or an int64, and whether it is stale.
type spbValue struct {
	v     any
	stale bool
}

// spbResults are the outcomes of a printer's Sparkplug commands: the last maxResults (oldest
// first), and those not yet sent in a DDATA.
type spbResults struct {
	// ring holds the outcomes, oldest first, of which the last maxResults are Command/Results:
	// it grows to twice that before the older half is dropped, so an outcome costs one copy of
	// a row, not a shift of the 99 before it.
	ring    []Result
	last    string
	pending []spbOutcome
}

// add records r as the newest outcome.
func (res *spbResults) add(r Result) {
	if len(res.ring) >= 2*maxResults {
		n := copy(res.ring, res.ring[len(res.ring)-maxResults:])
		clear(res.ring[n:])
		res.ring = res.ring[:n]
	}
	res.ring = append(res.ring, r)
}

// rows are Command/Results: the last maxResults outcomes, oldest first.
func (res *spbResults) rows() []Result {
	return res.ring[max(0, len(res.ring)-maxResults):]
}

type spbOutcome struct {
	payload string
	ts      uint64
}

// result records the outcome r (encoded as payload) of a command that came to d's printer as a
// DCMD: Command/LastResult in the next DDATA, and a row of Command/Results. It never blocks.
func (n *spbNode) result(p *printer, payload []byte, r Result) {
	d := n.byName[p.name]
	if d == nil {
		return
	}
	s := string(payload) // one copy, for Command/LastResult now and in the next DDATA
	n.mu.Lock()
	res := n.results[d]
	res.add(r)
	res.last = s
	if len(res.pending) == maxPending {
		copy(res.pending, res.pending[1:])
		res.pending = res.pending[:maxPending-1]
	}
	res.pending = append(res.pending, spbOutcome{payload: s, ts: nowMillis()})
	n.dirty[d] = true
	n.mu.Unlock()
	n.poke()
}

// jobSent records the job an entry of p sent: Job/Label. A trigger changes nothing.
func (n *spbNode) jobSent(p *printer, e outbox.Entry) {
	d := n.byName[p.name]
	if d == nil || e.Kind == outbox.KindTrigger {
		return
	}
	label := ""
	switch {
	case e.Kind == outbox.KindDeselect:
	case e.Job.LabelName != "":
		label = e.Job.LabelName
	case len(e.Job.LabelData) > 0:
		label = "(labelData)"
	default:
		label = e.Job.Key
	}
	n.mu.Lock()
	n.labels[d] = &label
	n.dirty[d] = true
	n.mu.Unlock()
	n.poke()
}

// snapshot reads what d's metrics show now; dead is true once its printer is known not to
// answer.
func (n *spbNode) snapshot(d *spbDevice) (vals []spbValue, dead bool) {
	p := d.p
	vals = make([]spbValue, mSnapshot)
	p.mu.Lock()
	// As P/status says it (readerror.go): reachable while its counters and its controller's
	// /status both read.
	read, countersRead, counters := p.read, p.reachable, p.counters
	reachable, _, reason, st := p.readState()
	p.mu.Unlock()
	if st != nil {
		vals[mState] = spbValue{v: string(st.State)}
		vals[mRAG] = spbValue{v: string(st.RAGStatus)}
		vals[mPrintable] = spbValue{v: st.State.Printable()}
	} else {
		vals[mState] = spbValue{v: "", stale: true}
		vals[mRAG] = spbValue{v: "", stale: true}
		vals[mPrintable] = spbValue{v: false, stale: true}
	}
	vals[mReachable] = spbValue{v: reachable, stale: !read}
	vals[mReason] = spbValue{v: ""}
	if read && !reachable {
		vals[mReason] = spbValue{v: reason}
	}
	if counters != nil {
		fresh := read && countersRead
		vals[mPrinted] = spbValue{v: counters.PrintedLabels, stale: !fresh}
		vals[mTriggers] = spbValue{v: counters.Triggers, stale: !fresh}
		vals[mBounces] = spbValue{v: counters.TriggerBounces, stale: !fresh}
	} else {
		vals[mPrinted] = spbValue{v: int64(0), stale: true}
		vals[mTriggers] = spbValue{v: int64(0), stale: true}
		vals[mBounces] = spbValue{v: int64(0), stale: true}
	}
	n.mu.Lock()
	label := n.labels[d]
	n.mu.Unlock()
	if label != nil {
		vals[mLabel] = spbValue{v: *label}
	} else {
		// Not known until this process sends a job to the printer.
		vals[mLabel] = spbValue{v: "", stale: true}
	}
	var pending, unknown int
	if v := p.ctl.view; v != nil {
		v.mu.Lock()
		pending = v.count(p.remote, outbox.Pending) + v.count(p.remote, outbox.Sending)
		unknown = v.count(p.remote, outbox.Unknown)
		v.mu.Unlock()
	}
	vals[mPending] = spbValue{v: int64(pending)}
	vals[mUnknown] = spbValue{v: int64(unknown)}
	return vals, read && !reachable
}

// metric is the j-th metric of d with value v at ts, named (in a birth) or by its alias alone.
func (d *spbDevice) metric(j int, v spbValue, ts uint64, named bool) sparkplug.Metric {
	def := spbDeviceMetrics[j]
	m := sparkplug.Metric{HasAlias: true, Alias: d.alias(j), Timestamp: ts, Datatype: def.dt, Value: v.v}
	if named {
		m.Name = def.name
	}
	if def.quality {
		q := int64(qualityGood)
		if v.stale {
			q = qualityStale
		}
		m.Properties = &sparkplug.PropertySet{Keys: []string{qualityProperty},
			Values: []sparkplug.PropertyValue{{Type: sparkplug.Int32, Value: q}}}
	}
	return m
}

// birth publishes d's DBIRTH, and its DDEATH after it when its printer is known not to answer;
// false when the connection failed a publish.
func (n *spbNode) birth(ctx context.Context, cm *autopaho.ConnectionManager, d *spbDevice) bool {
	vals, dead := n.snapshot(d)
	n.mu.Lock()
	res := n.results[d]
	rows := append([]Result(nil), res.rows()...)
	last := res.last
	res.pending = nil
	n.mu.Unlock()
	ts := nowMillis()
	pl := &sparkplug.Payload{Timestamp: ts}
	for j := range spbDeviceMetrics {
		var m sparkplug.Metric
		switch {
		case j < mSnapshot:
			m = d.metric(j, vals[j], ts, true)
		case j == mLastResult:
			m = d.metric(j, spbValue{v: last}, ts, true)
		case j == mResults:
			m = d.metric(j, spbValue{v: resultsDataSet(rows)}, ts, true)
		default: // a command: empty, for a host to write
			m = d.metric(j, spbValue{v: ""}, ts, true)
		}
		pl.Metrics = append(pl.Metrics, m)
	}
	if !n.publish(ctx, cm, n.deviceTopic("DBIRTH", d), pl) {
		return false
	}
	d.born, d.last = true, vals
	if dead {
		return n.death(ctx, cm, d)
	}
	return true
}

// resultTime is r's time as its JSON on P/result and in Command/LastResult gives it.
func resultTime(r Result) string {
	t := r.Time
	if t.IsZero() {
		t = time.Now()
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// death publishes d's DDEATH.
func (n *spbNode) death(ctx context.Context, cm *autopaho.ConnectionManager, d *spbDevice) bool {
	d.born = false
	return n.publish(ctx, cm, n.deviceTopic("DDEATH", d), &sparkplug.Payload{Timestamp: nowMillis()})
}

// resultsDataSet is Command/Results: one row per outcome, the oldest first. The time is a
// String, as in Command/LastResult's JSON (RFC 3339, UTC), not a DateTime column: Eclipse
// Tahu's JavaScript codec cannot decode a DataSet with a DateTime column, and a host built on
// it would lose the whole DBIRTH that carries one.
func resultsDataSet(rows []Result) *sparkplug.DataSet {
	ds := &sparkplug.DataSet{
		NumOfColumns: 7,
		Columns:      []string{"id", "command", "state", "current", "attempts", "error", "time"},
		Types: []sparkplug.DataType{sparkplug.String, sparkplug.String, sparkplug.String, sparkplug.String,
			sparkplug.Int64, sparkplug.String, sparkplug.String},
		Rows: [][]any{},
	}
	for _, r := range rows {
		ds.Rows = append(ds.Rows, []any{r.ID, r.Command, r.State, r.Current, int64(r.Attempts), r.Error,
			resultTime(r)})
	}
	return ds
}

// update publishes what changed of the printers marked dirty: DDATA with the metrics whose
// value or quality changed and each new outcome, DDEATH for a printer that stopped answering,
// DBIRTH for one that answers again. false when the connection failed a publish.
func (n *spbNode) update(ctx context.Context, cm *autopaho.ConnectionManager) bool {
	n.mu.Lock()
	dirty := n.dirty
	n.dirty = map[*spbDevice]bool{}
	n.mu.Unlock()
	for _, d := range n.devices {
		if !dirty[d] {
			continue
		}
		vals, dead := n.snapshot(d)
		switch {
		case !d.born && dead:
			continue
		case !d.born:
			if !n.birth(ctx, cm, d) {
				return false
			}
			continue
		case dead:
			if !n.death(ctx, cm, d) {
				return false
			}
			continue
		}
		ts := nowMillis()
		pl := &sparkplug.Payload{Timestamp: ts}
		for j := range vals {
			if vals[j] != d.last[j] {
				pl.Metrics = append(pl.Metrics, d.metric(j, vals[j], ts, false))
			}
		}
		n.mu.Lock()
		res := n.results[d]
		outs := res.pending
		res.pending = nil
		n.mu.Unlock()
		for _, o := range outs {
			pl.Metrics = append(pl.Metrics, d.metric(mLastResult, spbValue{v: o.payload}, o.ts, false))
		}
		d.last = vals
		if len(pl.Metrics) == 0 {
			continue
		}
		if !n.publish(ctx, cm, n.deviceTopic("DDATA", d), pl) {
			return false
		}
	}
	return true
}
