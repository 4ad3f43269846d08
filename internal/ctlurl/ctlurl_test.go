package ctlurl

import "testing"

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{
		"HTTP://Host:80/":                   "http://host",
		"https://Host:443/Gw/":              "https://host/Gw",
		"http://user:secret@host:8080/a":    "http://host:8080/a",
		"http://[::1]:80/":                  "http://[::1]",
		"not a url/":                        "not a url",
		"http://host:8080/printer7/api/v3/": "http://host:8080/printer7/api/v3",
	} {
		if got := Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"http://Host:80/api/v3":            "http://host",
		"http://host:8080/printer7/api/v3": "http://host:8080/printer7",
	} {
		if got := OfBase(in); got != want {
			t.Errorf("OfBase(%q) = %q, want %q", in, got, want)
		}
	}
}
