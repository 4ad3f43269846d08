package main

// The usage rules of labelctl's flags live here: the range of every numeric and duration flag,
// the wording of a flag that does not parse or does not exist, and the translation of the SDK's
// argument errors into the flags and arguments a person typed. The SDK keeps its own messages
// for Go callers; only what labelctl prints changes.

import (
	"errors"
	"math"
	"regexp"
	"strings"
	"time"

	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/labelprinter/go-labelprinter/internal/suggest"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// valueRule is the range a numeric or duration flag accepts.
type valueRule struct {
	// zeroOK accepts 0 (for flags where 0 means "unlimited", "none" or "now"); otherwise the
	// value must be positive.
	zeroOK bool
	// eg is a valid value for the message, where the flag's default is not one.
	eg string
}

// flagRules holds the range of the numeric and duration flags, by name: a name means the same
// in every command that has it. The flags of sim are checked by printersim.Flags, which
// cmd/printersim shares, and outbox prune's --older-than and outbox run's --retry where those
// commands are; TestUsageErrorsEveryCommand holds every numeric flag of every command to a
// range, wherever it is checked.
var flagRules = map[string]valueRule{
	"timeout":             {},             // a request needs some time
	"interval":            {},             // the SDK words its own floor
	"since":               {eg: "24h"},    // a range reaching back
	"until":               {zeroOK: true}, // 0: up to now
	"size":                {},             // a declared body length
	"copies":              {zeroOK: true}, // 0: unlimited
	"first-row":           {zeroOK: true}, // rows count from 0
	"row-count":           {zeroOK: true}, // 0: all remaining rows
	"print-delay":         {zeroOK: true}, // mm
	"auto-print-gap":      {zeroOK: true}, // nm
	"auto-print-interval": {zeroOK: true}, // nm
	"expire-after":        {},             // outbox: 0 would be the default, unasked
	"dpi":                 {zeroOK: true}, // labels preview: 0 is the label's resolution
	"wait-timeout":        {zeroOK: true}, // 0: no limit
}

// checkFlags applies flagRules to the flags of cmd that were given, so a mistake exits 2 naming
// the flag before anything is opened or sent.
func checkFlags(cmd *cobra.Command) error {
	var err error
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if err == nil {
			err = checkValue(cmd.Flags(), f)
		}
	})
	return err
}

func checkValue(fs *pflag.FlagSet, f *pflag.Flag) error {
	rule, ok := flagRules[f.Name]
	if !ok {
		return nil
	}
	name := "--" + f.Name
	var sign int
	switch f.Value.Type() {
	case "duration":
		d, _ := fs.GetDuration(f.Name)
		sign = cmpZero(float64(d))
	case "int":
		n, _ := fs.GetInt(f.Name)
		sign = cmpZero(float64(n))
	case "int64":
		n, _ := fs.GetInt64(f.Name)
		sign = cmpZero(float64(n))
	case "float64":
		v, _ := fs.GetFloat64(f.Name)
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return usagef("%s must be a finite number, not %s", name, f.Value.String())
		}
		sign = cmpZero(v)
	default:
		return nil
	}
	switch {
	case sign < 0 && rule.zeroOK:
		return usagef("%s must be 0 or more", name)
	case sign <= 0 && !rule.zeroOK:
		if f.Value.Type() == "duration" {
			return usagef("%s must be more than 0, such as %s", name, example(f, rule.eg))
		}
		return usagef("%s must be more than 0", name)
	}
	return nil
}

func cmpZero(v float64) int {
	switch {
	case v < 0:
		return -1
	case v > 0:
		return 1
	}
	return 0
}

// example is a valid value for a duration flag: its default, else eg, else 1s.
func example(f *pflag.Flag, eg string) string {
	if d, err := time.ParseDuration(f.DefValue); err == nil && d > 0 {
		return f.DefValue
	}
	if eg != "" {
		return eg
	}
	return "1s"
}

// flagError words pflag's parse errors for a person: a value that does not parse says what
// kind of value the flag wants, and an unknown flag suggests the closest known one.
func flagError(cmd *cobra.Command, err error) error {
	var nx *pflag.NotExistError
	var iv *pflag.InvalidValueError
	switch {
	case errors.As(err, &nx) && nx.GetSpecifiedName() != "":
		msg := "unknown flag: --" + nx.GetSpecifiedName()
		if s := closestFlag(cmd.Flags(), nx.GetSpecifiedName()); s != "" {
			msg += " (did you mean --" + s + "?)"
		}
		return usageError{errors.New(msg)}
	case errors.As(err, &iv):
		f := iv.GetFlag()
		want := ""
		switch f.Value.Type() {
		case "duration":
			want = "a duration such as " + example(f, flagRules[f.Name].eg)
		case "int", "int64", "int32", "uint", "uint64":
			want = "a whole number"
		case "float64", "float32":
			want = "a number"
		case "bool":
			want = "true or false"
		}
		if want != "" {
			return usagef("--%s wants %s, not %q", f.Name, want, iv.GetValue())
		}
	}
	return usageError{err}
}

// closestFlag returns the visible flag of fs nearest to name (suggest.Closest: at most 2 edits
// away, or name is a prefix of it), else "".
func closestFlag(fs *pflag.FlagSet, name string) string {
	var names []string
	fs.VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	})
	return suggest.Closest(name, names)
}

// sdkWords are the words of the SDK's argument errors and what a labelctl user typed for them.
// Longer words come first so that KeyColumn is not read as Key.
var sdkWords = []struct{ sdk, flag string }{
	{"ImagePutOptions.Size", "--size"},
	{"AutoPrintInterval", "--auto-print-interval"},
	{"AutoPrintGap", "--auto-print-gap"},
	{"PrintDelay", "--print-delay"},
	{"PrintedColumn", "--printed-column"},
	{"CopiesColumn", "--copies-column"},
	{"LabelColumn", "--label-column"},
	{"LabelName", "--label"},
	{"KeyColumn", "--key-column"},
	{"TableName", "--table"},
	{"FirstRow", "--first-row"},
	{"RowCount", "--row-count"},
	{"Copies", "--copies"},
	{"Interval", "--interval"},
	{"Key", "--key"},
	{"base URL", "--url"},
	{"printer name", "--printer"},
	{"unknown resolution", "unknown --resolution"},
	{"token contains", "--token (or LABELPRINTER_TOKEN) contains"},
}

var (
	sdkOp      = regexp.MustCompile(`(labelprinter: )?invalid argument: [A-Za-z.]+: `)
	sdkWordsRE = func() *regexp.Regexp {
		alts := make([]string, len(sdkWords))
		for i, w := range sdkWords {
			alts[i] = regexp.QuoteMeta(w.sdk)
		}
		return regexp.MustCompile(`\b(` + strings.Join(alts, "|") + `)\b`)
	}()
)

// message is the line labelctl prints for err: an SDK argument error loses its Go operation
// name and speaks of the flags instead of the Go fields.
func message(err error) string {
	msg := oneLine(err.Error())
	if !errors.Is(err, labelprinter.ErrInvalidArgument) {
		return msg
	}
	msg = sdkOp.ReplaceAllString(msg, "")
	return sdkWordsRE.ReplaceAllStringFunc(msg, func(w string) string {
		for _, sw := range sdkWords {
			if sw.sdk == w {
				return sw.flag
			}
		}
		return w
	})
}
