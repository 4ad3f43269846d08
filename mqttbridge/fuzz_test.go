package mqttbridge

import (
	"slices"
	"testing"
	"unicode/utf8"
)

// FuzzParseCommand: any payload either is refused or yields a command whose id obeys the id
// rule and whose job the SDK accepts; nothing panics.
func FuzzParseCommand(f *testing.F) {
	for _, s := range []string{
		`{"id":"a","job":{"labelName":"x","copies":2}}`, `{"id":"a"}`, `{"id":"a","job":null,"expireAfter":"5m"}`,
		`{"id":"a","job":{"labelData":{"t":1},"extra":[1]}}`, `{"id":"a","job":{"labelName":"x","repeatPrint":1}}`, `{"id":7}`, `[]`, `null`, "{\"id\":\"\xff\"}", `{"id":"a\u0000"}`,
	} {
		f.Add("printJob", []byte(s))
		f.Add("trigger", []byte(s))
	}
	for _, s := range []string{`{"id":"a","attempts":1}`, `{"id":"a","attempts":-1}`, `{"id":"a","attempts":1.0}`, `{"id":"a","attempts":"1"}`, `{"id":"a","attempts":99999999999999999999}`} {
		f.Add("resend", []byte(s))
		f.Add("cancel", []byte(s))
	}
	f.Fuzz(func(t *testing.T, name string, payload []byte) {
		cmd, err := parseCommand(name, payload)
		if err != nil {
			if cmd.id != "" && checkID(cmd.id) != nil {
				t.Fatalf("refused command names an unusable id %q", cmd.id)
			}
			return
		}
		if checkID(cmd.id) != nil || !utf8.ValidString(cmd.id) {
			t.Fatalf("accepted id %q", cmd.id)
		}
		if cmd.job != nil {
			if err := cmd.job.Validate(); err != nil {
				t.Fatalf("accepted a job the SDK refuses: %v", err)
			}
			if _, err := cmd.job.MarshalJSON(); err != nil {
				t.Fatalf("accepted a job that does not encode: %v", err)
			}
			for k := range cmd.job.Extra {
				if !slices.Contains(untypedJobAttributes, k) {
					t.Fatalf("accepted the undocumented job attribute %q", k)
				}
			}
		}
		if cmd.name != cmdPrintJob && (cmd.job != nil || cmd.expireAfter != 0) {
			t.Fatalf("%s took printJob members", cmd.name)
		}
		if cmd.attempts != nil && (*cmd.attempts < 0 || cmd.name != cmdCancel && cmd.name != cmdResend) {
			t.Fatalf("%s took attempts %d", cmd.name, *cmd.attempts)
		}
	})
}
