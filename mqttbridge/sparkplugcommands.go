package mqttbridge

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"strings"

	"github.com/eclipse/paho.golang/paho"
	"github.com/labelprinter/go-labelprinter/mqttbridge/sparkplug"
)

// This file holds the Sparkplug commands. A host writes a printer's Command/* metric in a DCMD,
// a String holding the same JSON as the bridge's own command topics; each goes, in the order of
// the DCMD's metrics, into the same per-printer queue, outbox and ledger as a command on
// <topic_prefix>/<printer>/cmd/..., so its id makes it take effect once, whichever way it came
// and however often. Hosts publish DCMD at QoS 0 on clean sessions: a command is lost rather
// than repeated, and a host that did not hear back retries it, with the same id; that one is
// answered duplicate and prints nothing. Outcomes go to Command/LastResult (and P/result). A
// command without an id prints nothing and is refused, so a plain tag write that a host
// retries never prints twice; the one exception (sparkplug.allow_trigger_without_id) is a
// Command/Trigger without an id, which triggers once per DCMD message.

// The commands, as metric names, and the bridge's command each one is.
const (
	spbPrintJob   = "Command/PrintJob"
	spbTrigger    = "Command/Trigger"
	spbDeselect   = "Command/Deselect"
	spbAbortPrint = "Command/AbortPrint"
	spbResend     = "Command/Resend"
	spbCancel     = "Command/Cancel"
)

// maxDCMDMetrics is how many metrics one DCMD may carry: a DCMD with more is refused whole, with
// one Command/LastResult naming the cap, rather than one refusal or command per metric.
const maxDCMDMetrics = 64

var spbCommands = map[string]string{
	spbPrintJob:   cmdPrintJob,
	spbTrigger:    cmdTrigger,
	spbDeselect:   cmdPrintJob,
	spbAbortPrint: cmdAbortPrint,
	spbResend:     cmdResend,
	spbCancel:     cmdCancel,
}

// deviceCommand takes a DCMD: each Command/* metric is queued on its printer as the bridge's
// own command would be; anything else is refused on Command/LastResult. It never blocks.
func (n *spbNode) deviceCommand(cl *paho.Client, pb *paho.Publish) {
	name, ok := strings.CutPrefix(pb.Topic, n.topic("DCMD")+"/")
	d := n.byName[name]
	if !ok || d == nil {
		n.b.log.Info("a Sparkplug message for no printer of this node is ignored", "topic", clip(pb.Topic))
		return
	}
	if n.b.stopping.Load() {
		// As a command on the bridge's own topics stays with the broker: the host, which
		// hears nothing, sends it again, to the bridge that runs next.
		return
	}
	pl, err := sparkplug.Unmarshal(pb.Payload)
	if err != nil {
		n.refuse(d, "", "", invalidf("the DCMD is not a Sparkplug B payload: %v; nothing was done", err))
		return
	}
	if len(pl.Metrics) > maxDCMDMetrics {
		n.refuse(d, "", "", invalidf("the DCMD carries %d metrics, over the cap of %d a DCMD may carry; none was taken, nothing was done", len(pl.Metrics), maxDCMDMetrics))
		return
	}
	idless := false // an id-less Command/Trigger of this DCMD was taken
	for _, m := range pl.Metrics {
		metric := m.Name
		if metric == "" && m.HasAlias && m.Alias >= d.alias(0) && m.Alias < d.alias(len(spbDeviceMetrics)) {
			metric = spbDeviceMetrics[m.Alias-d.alias(0)].name
		}
		cmd, ok := spbCommands[metric]
		if !ok {
			what := clip(metric)
			if metric == "" {
				what = "the metric without a name whose alias is no metric of this printer"
			}
			n.refuse(d, metric, "", invalidf("%s is not a command of this printer: write Command/PrintJob, Command/Trigger, Command/Deselect, Command/AbortPrint, Command/Resend or Command/Cancel; nothing was done", what))
			continue
		}
		s, ok := m.Value.(string)
		if !ok || m.IsNull {
			n.refuse(d, cmd, "", invalidf("%s must be a String holding the command's JSON, such as {\"id\":\"...\"}; nothing was done", metric))
			continue
		}
		payload, err := n.commandPayload(metric, []byte(s), &idless)
		if err != nil {
			c, _ := parseCommand(cmd, []byte(s)) // the id, when it is usable
			n.refuse(d, cmd, c.id, err)
			continue
		}
		synth := &paho.Publish{Topic: printerTopic(n.b.cfg.TopicPrefix, d.p.name, topicCmd+"/"+cmd), Payload: payload}
		n.b.queue(d.p, heldCommand{ctx: n.cmdCtx, cl: cl, pb: synth, spb: d.p})
	}
}

// commandPayload is the payload of the bridge's command for a write of metric with value s.
// Command/PrintJob needs a job (Command/Deselect deselects, and takes none); a Command/Trigger
// without an id is given one of its own when the configuration allows it, once per DCMD
// (idless says one was).
func (n *spbNode) commandPayload(metric string, s []byte, idless *bool) ([]byte, error) {
	// Only the top-level members named are looked at; parseCommand reads the whole command
	// once it is queued.
	isObject := json.Valid(s) && bytes.HasPrefix(bytes.TrimLeft(s, " \t\r\n"), []byte("{"))
	switch {
	case metric == spbPrintJob && isObject:
		if job, ok := jsonMember(s, "job"); !ok || bytes.Equal(job, []byte("null")) {
			return nil, invalidf(`Command/PrintJob needs a "job" (Command/Deselect deselects); nothing was done`)
		}
	case metric == spbDeselect && isObject:
		if _, ok := jsonMember(s, "job"); ok {
			return nil, invalidf(`Command/Deselect takes no "job" (Command/PrintJob selects one); nothing was done`)
		}
	case metric == spbTrigger && n.cfg.AllowTriggerWithoutID && (len(bytes.TrimSpace(s)) == 0 || isObject && !hasMember(s, "id")):
		if *idless {
			return nil, invalidf("a second Command/Trigger without an id in one DCMD: one such trigger is taken per DCMD message; nothing was done")
		}
		*idless = true
		id, _ := json.Marshal("sparkplug-trigger-" + rand.Text())
		inner := bytes.TrimSpace(s)
		if len(inner) == 0 || len(bytes.TrimSpace(inner[1:])) == 1 { // "" or {}
			return []byte(`{"id":` + string(id) + `}`), nil
		}
		return append([]byte(`{"id":`+string(id)+`,`), inner[1:]...), nil
	}
	// Anything else is the bridge's to judge (parseCommand), on the same terms as on its topics.
	return s, nil
}

// jsonMember returns the value of the top-level member name of obj, a valid JSON object
// (json.Valid), and whether it has one; of a name given twice, the last, as encoding/json keeps
// it. Names are compared as decoded ("\u006aob" is "job"). It reads obj in place, without
// decoding the values.
func jsonMember(obj []byte, name string) (value []byte, found bool) {
	i := skipJSONSpace(obj, 0) + 1 // past '{'
	for {
		i = skipJSONSpace(obj, i)
		if i >= len(obj) || obj[i] != '"' {
			return value, found // '}': the end
		}
		end := skipJSONValue(obj, i)
		key := obj[i+1 : end-1]
		match := string(key) == name
		if !match && bytes.IndexByte(key, '\\') >= 0 {
			_, decoded, _ := scanString(obj, i)
			match = decoded == name
		}
		i = skipJSONSpace(obj, end) + 1 // past ':'
		i = skipJSONSpace(obj, i)
		end = skipJSONValue(obj, i)
		if match {
			value, found = obj[i:end], true
		}
		i = skipJSONSpace(obj, end) + 1 // past ',' or '}'
	}
}

// hasMember reports whether the JSON object obj has a top-level member name.
func hasMember(obj []byte, name string) bool {
	_, ok := jsonMember(obj, name)
	return ok
}

func skipJSONSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipJSONValue returns where the value of valid JSON that starts at b[i] ends.
func skipJSONValue(b []byte, i int) int {
	depth := 0
	for ; i < len(b); i++ {
		switch b[i] {
		case '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
			if depth == 0 {
				return i + 1
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
			if depth < 0 {
				return i // the end of the enclosing object
			}
		case ',', ' ', '\t', '\n', '\r', ':':
			if depth == 0 {
				return i
			}
		}
	}
	return i
}

// refuse answers a write that is no command of the bridge: invalid, on Command/LastResult and
// P/result, with the reason; nothing is done. command is the bridge's command, or the metric
// written when it names none.
func (n *spbNode) refuse(d *spbDevice, command, id string, err error) {
	n.b.log.Info("Sparkplug command refused", "printer", d.p.name, "id", id, "err", err)
	n.b.result(d.p.topic(topicResult), reply{spb: d.p}, Result{ID: id, Command: clip(command), State: StateInvalid, Error: err.Error()})
}
