package mqttbridge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	labelprinter "github.com/labelprinter/go-labelprinter"
)

const (
	// maxIDLen bounds a command's id, as the outbox bounds its keys.
	maxIDLen = 256
	// maxPayload bounds a command's payload; a print job with inline label data fits well
	// below it.
	maxPayload = 1 << 20
)

// command is a command payload that passed every check.
type command struct {
	name        string // the topic's last segment
	id          string
	job         *labelprinter.PrintJob // nil deselects (printJob only)
	expireAfter time.Duration
	attempts    *int // cancel and resend (required): act only while the entry has these attempts
}

// errInvalid marks a command that is refused and never executed.
var errInvalid = errors.New("invalid command")

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errInvalid, fmt.Sprintf(format, args...))
}

// parseCommand checks a payload for command name and returns it. On error, id is the
// payload's id when that id itself is usable, so the caller can name it in the result.
func parseCommand(name string, payload []byte) (cmd command, err error) {
	cmd.name = name
	if len(payload) > maxPayload {
		return cmd, invalidf("payload is larger than %d bytes", maxPayload)
	}
	// encoding/json would turn invalid UTF-8 into U+FFFD silently, and an id must arrive as sent.
	if !utf8.Valid(payload) {
		return cmd, invalidf("payload is not UTF-8")
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(payload, &members); err != nil || members == nil {
		return cmd, invalidf("payload is not a JSON object")
	}
	// Lone surrogates and repeated members would be changed or dropped by the decoder.
	strict := checkStrictJSON(payload)
	if strict != nil && strict.topID {
		return cmd, invalidf("%s", strict.msg)
	}
	rawID, ok := members["id"]
	if !ok {
		return cmd, invalidf(`no "id"`)
	}
	if err := json.Unmarshal(rawID, &cmd.id); err != nil || bytes.Equal(bytes.TrimSpace(rawID), []byte("null")) {
		cmd.id = ""
		return cmd, invalidf(`"id" is not a JSON string`)
	}
	if err := checkID(cmd.id); err != nil {
		cmd.id = ""
		return cmd, err
	}
	if strict != nil {
		return cmd, invalidf("%s", strict.msg)
	}
	switch name {
	case cmdPrintJob, cmdTrigger, cmdAbortPrint, cmdCancel, cmdResend:
	default:
		return cmd, invalidf("unknown command %q", clip(name))
	}
	for k := range members {
		switch {
		case k == "id":
		case name == cmdPrintJob && k == "job":
		case (name == cmdPrintJob || name == cmdTrigger) && k == "expireAfter":
		case (name == cmdCancel || name == cmdResend) && k == "attempts":
		default:
			return cmd, invalidf("unknown member %q for %s", clip(k), name)
		}
	}
	if raw, ok := members["attempts"]; ok {
		var n int
		if err := json.Unmarshal(raw, &n); err != nil || n < 0 || bytes.ContainsAny(raw, ".eE") {
			return cmd, invalidf(`"attempts" is not a whole number of 0 or more`)
		}
		cmd.attempts = &n
	}
	if cmd.attempts == nil && (name == cmdCancel || name == cmdResend) {
		// The attempts are the command's identity: a cancel or resend repeated (a redelivery,
		// a publisher's retry with a new packet identifier) finds them changed and does nothing.
		return cmd, invalidf(`"attempts" is required: send {"id":%q,"attempts":N} with the entry's attempts from P/outbox or the result`, clip(cmd.id))
	}
	if raw, ok := members["expireAfter"]; ok {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return cmd, invalidf(`"expireAfter" is not a duration string such as "10m"`)
		}
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return cmd, invalidf(`"expireAfter" must be a positive duration such as "10m"`)
		}
		cmd.expireAfter = d
	}
	if name != cmdPrintJob {
		return cmd, nil
	}
	raw, ok := members["job"]
	if !ok || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return cmd, nil // deselect
	}
	job, err := decodeJob(raw)
	if err != nil {
		return cmd, err
	}
	if err := job.Validate(); err != nil {
		return cmd, fmt.Errorf("%w: %w", errInvalid, err)
	}
	cmd.job = &job
	return cmd, nil
}

// checkID holds the rule for a usable id: 1-256 bytes of UTF-8 without control characters.
func checkID(id string) error {
	switch {
	case id == "":
		return invalidf(`"id" is empty`)
	case len(id) > maxIDLen:
		return invalidf(`"id" is longer than %d bytes, the most limits.id_bytes allows`, maxIDLen)
	case hasControl(id):
		return invalidf(`"id" contains a control character`)
	}
	return nil
}

// jobFields maps the JSON names of PrintJob's fields to their index, read from the SDK's own
// tags so the two cannot drift apart.
var jobFields = func() map[string]int {
	m := map[string]int{}
	t := reflect.TypeFor[labelprinter.PrintJob]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			m[name] = i
		}
	}
	return m
}()

// decodeJob reads a print job object. Members match fields by their exact JSON name
// (encoding/json alone would take "LABELNAME" for labelName); a documented attribute the SDK
// has no field for goes to Extra unchanged, and any other member is refused
// (checkJobAttributes).
func decodeJob(raw json.RawMessage) (labelprinter.PrintJob, error) {
	var job labelprinter.PrintJob
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil || members == nil {
		return job, invalidf(`"job" is not a JSON object`)
	}
	names := make([]string, 0, len(members))
	for k := range members {
		names = append(names, k)
	}
	if err := checkJobAttributes(names); err != nil {
		return job, err
	}
	v := reflect.ValueOf(&job).Elem()
	for k, m := range members {
		i, ok := jobFields[k]
		if !ok {
			if job.Extra == nil {
				job.Extra = map[string]any{}
			}
			job.Extra[k] = json.RawMessage(bytes.Clone(m))
			continue
		}
		if k == "labelData" {
			// A label is an object; null reads as absent. The SDK would send a string or a
			// number as it is, for the printer to refuse.
			switch t := bytes.TrimSpace(m); {
			case bytes.Equal(t, []byte("null")):
			case len(t) > 0 && t[0] == '{':
				job.LabelData = bytes.Clone(m)
			default:
				return labelprinter.PrintJob{}, invalidf("job.labelData: not a JSON object (a label)")
			}
			continue
		}
		if err := json.Unmarshal(m, v.Field(i).Addr().Interface()); err != nil {
			return labelprinter.PrintJob{}, invalidf("job.%s: wrong type", k)
		}
	}
	return job, nil
}

// clip bounds a caller's string before it goes into an error.
func clip(s string) string {
	if len(s) <= 64 {
		return s
	}
	for i := 64; i > 0; i-- {
		if utf8.RuneStart(s[i]) {
			return s[:i] + "…"
		}
	}
	return ""
}
