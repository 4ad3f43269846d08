package main

// redact.go holds what the exporter adds to the SDK's redaction rule. A module's credentials
// are added by its prometheus/common round tripper, which the SDK cannot see, so each probe's
// Client is given their current values (httpcreds, via WithRedactedValues): the SDK
// then keeps them out of its errors in every spelling, and Client.Redact keeps them out of the
// exporter's own text (debug answers, log lines). What stays here is what no Client can know:
// Authorization-shaped values whose credential the exporter never holds, such as an OAuth2
// access token.

import (
	"regexp"

	labelprinter "github.com/labelprinter/go-labelprinter"
)

// authValue matches an Authorization value of the usual schemes, whoever's it is (an OAuth2
// access token the exporter never sees in the clear included). A value must hold a digit, as
// every generated token does, so prose such as "wrong bearer token" is left alone. Backslash and
// percent belong to the value, and a space may be written "+", "%20" or "\u0020", so a
// JSON-escaped ("abc\/DEF") or percent-encoded echo loses all of it rather than the part
// before its first escape.
var authValue = regexp.MustCompile(`(?i)\b(bearer|basic|token)(\s+|=|:\s*|\+|%20|\\u0020)[A-Za-z._~+/=%\\-]*[0-9][A-Za-z0-9._~+/=%\\-]*`)

const redacted = "[REDACTED]"

// redact removes the probe Client's credentials (its rule: the module's credentials in any
// spelling) and then Authorization-shaped values from s.
func redact(c *labelprinter.Client, s string) string {
	return authValue.ReplaceAllString(c.Redact(s), "${1}${2}"+redacted)
}
