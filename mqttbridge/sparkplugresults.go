package mqttbridge

// This file holds how Command/Results outlives the process: at start the node fills each
// printer's rows from its outbox, the newest settled entries by their last change, so that the
// DBIRTH of a bridge that restarted, or of a pair's standby that took over, tells a host that
// reconnects what happened before, as the rows the last process kept did.

// restoreResults fills each printer's Command/Results with the outcomes its outbox holds: the
// newest maxResults final entries of each printer by their last change, oldest first, each as
// its final result (the steps before it, such as queued, are not kept). A controller's outbox
// is read once, for maxResults entries per printer on it; one that cannot be read leaves its
// printers' rows as they are, and the node runs without them.
func (n *spbNode) restoreResults() {
	for _, ctl := range n.b.ctls {
		if ctl.ob == nil {
			continue
		}
		entries, err := ctl.ob.Recent(maxResults * len(ctl.printers))
		if err != nil {
			n.b.log.Warn("Command/Results starts empty: the outbox cannot be read", "url", ctl.url, "err", err)
			continue
		}
		rows := map[*spbDevice][]Result{}
		for _, e := range entries {
			p := ctl.byRemote[e.Printer]
			if p == nil {
				continue
			}
			if d := n.byName[p.name]; d != nil {
				rows[d] = append(rows[d], entryResult(e))
			}
		}
		n.mu.Lock()
		for d, rs := range rows {
			res := n.results[d]
			// Outcomes this process recorded already are newer than any entry read here.
			merged := append(rs, res.rows()...)
			if len(merged) > maxResults {
				merged = merged[len(merged)-maxResults:]
			}
			res.ring = merged
			if res.last == "" {
				res.last = string(rs[len(rs)-1].encode())
			}
		}
		n.mu.Unlock()
	}
}
