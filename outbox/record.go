package outbox

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	labelprinter "github.com/labelprinter/go-labelprinter"
)

// record is an entry as stored in the file. The job is kept as the exact body the SDK sends,
// so what goes out after a restart is the JSON that was enqueued.
type record struct {
	Seq         uint64          `json:"seq"`
	ID          string          `json:"id"`
	Printer     string          `json:"printer,omitempty"`
	Kind        string          `json:"kind,omitempty"` // "" for a printJob, as in the first format
	Job         json.RawMessage `json:"job,omitempty"`  // the body sent; absent for the other kinds
	ExpireAfter time.Duration   `json:"expireAfter"`
	State       State           `json:"state"`
	Attempts    int             `json:"attempts"`
	Enqueued    time.Time       `json:"enqueued"`
	Updated     time.Time       `json:"updated"`
	Error       string          `json:"error,omitempty"`
	Response    json.RawMessage `json:"response,omitempty"`
}

func (r *record) encode() ([]byte, error) { return json.Marshal(r) }

// decodeRecord reads a stored record and checks what the outbox relies on.
func decodeRecord(b []byte) (*record, error) {
	var r record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("outbox: unreadable entry: %w", err)
	}
	if r.ID == "" || r.Seq == 0 || !r.State.valid() {
		return nil, errors.New("outbox: unreadable entry: missing id, sequence or state")
	}
	kind, ok := parseKind(r.Kind)
	if !ok {
		return nil, fmt.Errorf("outbox: unreadable entry %q: unknown kind %q", r.ID, r.Kind)
	}
	if (kind == KindPrintJob) != (len(r.Job) > 0) {
		return nil, fmt.Errorf("outbox: unreadable entry %q: a %s entry with a job of %d bytes", r.ID, kind, len(r.Job))
	}
	return &r, nil
}

// kind is the record's Kind; decodeRecord has checked it.
func (r *record) kind() Kind {
	k, _ := parseKind(r.Kind)
	return k
}

// kindName is k as the file stores it: "" for KindPrintJob, so such entries are stored as in
// the first format.
func kindName(k Kind) string {
	if k == KindPrintJob {
		return ""
	}
	return k.String()
}

// entry turns a record into what callers see.
func (r *record) entry() (Entry, error) {
	e := r.view()
	if r.kind() == KindPrintJob {
		job, err := decodeJob(r.Job)
		if err != nil {
			return Entry{}, fmt.Errorf("outbox: entry %q: %w", r.ID, err)
		}
		e.Job = job
	}
	return e, nil
}

// view is entry for the WithStateChange callback, which has no error to return: a stored job
// that cannot be read (a damaged file) leaves Job empty.
func (r *record) view() Entry {
	e := Entry{
		Intent:   Intent{ID: r.ID, Printer: r.Printer, Kind: r.kind(), ExpireAfter: r.ExpireAfter},
		State:    r.State,
		Attempts: r.Attempts,
		Enqueued: r.Enqueued,
		Updated:  r.Updated,
		Error:    r.Error,
		Response: r.Response,
	}
	if e.Kind == KindPrintJob {
		e.Job, _ = decodeJob(r.Job)
	}
	return e
}

// seqKey is the big-endian key of sequence number n, so keys sort in enqueue order.
func seqKey(n uint64) []byte { return binary.BigEndian.AppendUint64(make([]byte, 0, 8), n) }

// decodeJob reads a print job body back into a PrintJob. Members are matched by their exact
// name (encoding/json would match "LABELNAME" to LabelName, and a job whose Extra holds such a
// key would come back different); every member that is not a typed field goes to Extra as a
// json.RawMessage, which the SDK encodes unchanged.
func decodeJob(b []byte) (labelprinter.PrintJob, error) {
	var j labelprinter.PrintJob
	var members map[string]json.RawMessage
	if err := json.Unmarshal(b, &members); err != nil {
		return j, fmt.Errorf("stored print job: %w", err)
	}
	if members == nil {
		return j, errors.New("stored print job: not an object")
	}
	for k, v := range members {
		var err error
		switch k {
		case "labelName":
			err = json.Unmarshal(v, &j.LabelName)
		case "labelColumn":
			err = json.Unmarshal(v, &j.LabelColumn)
		case "labelData":
			j.LabelData = bytes.Clone(v)
		case "tableName":
			err = json.Unmarshal(v, &j.TableName)
		case "keyColumn":
			err = json.Unmarshal(v, &j.KeyColumn)
		case "key":
			err = json.Unmarshal(v, &j.Key)
		case "copies":
			err = json.Unmarshal(v, &j.Copies)
		case "copiesColumn":
			err = json.Unmarshal(v, &j.CopiesColumn)
		case "queue":
			err = json.Unmarshal(v, &j.Queue)
		case "freeze":
			err = json.Unmarshal(v, &j.Freeze)
		case "firstRow":
			err = json.Unmarshal(v, &j.FirstRow)
		case "rowCount":
			err = json.Unmarshal(v, &j.RowCount)
		case "printedColumn":
			err = json.Unmarshal(v, &j.PrintedColumn)
		case "printDelay":
			err = json.Unmarshal(v, &j.PrintDelay)
		case "autoPrintGap":
			err = json.Unmarshal(v, &j.AutoPrintGap)
		case "autoPrintInterval":
			err = json.Unmarshal(v, &j.AutoPrintInterval)
		case "checkpoint":
			err = json.Unmarshal(v, &j.Checkpoint)
		case "description":
			err = json.Unmarshal(v, &j.Description)
		default:
			if j.Extra == nil {
				j.Extra = map[string]any{}
			}
			j.Extra[k] = json.RawMessage(bytes.Clone(v))
		}
		if err != nil {
			return labelprinter.PrintJob{}, fmt.Errorf("stored print job: %s: %w", k, err)
		}
	}
	return j, nil
}

// jobFields lists the member names decodeJob types; TestJobFields holds it to PrintJob's tags.
var jobFields = []string{
	"labelName", "labelColumn", "labelData", "tableName", "keyColumn", "key", "copies",
	"copiesColumn", "queue", "freeze", "firstRow", "rowCount", "printedColumn", "printDelay",
	"autoPrintGap", "autoPrintInterval", "checkpoint", "description",
}
