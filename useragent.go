package labelprinter

import "runtime/debug"

// This file holds the rule for the version in the SDK's User-Agent: the version of this module
// the program was built with, as the go command recorded it in the program's build information.

// sdkModulePath is the module this package belongs to, looked up in the build information.
const sdkModulePath = "github.com/labelprinter/go-labelprinter"

// unknownVersion is the User-Agent's version when the program carries no build information
// naming this module (a binary built without module support).
const unknownVersion = "unknown"

// moduleVersion returns the version of this module the running program was built with.
func moduleVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return unknownVersion
	}
	return versionIn(bi)
}

// versionIn finds this module in bi: as a dependency, the version the program requires (v0.9.7,
// also when a replace directive points it at a directory); as the program's own module, the
// version the go command gave the build: a pseudo-version when version control information was
// stamped, else (devel), sent as "devel" since parentheses mark a comment in a User-Agent.
func versionIn(bi *debug.BuildInfo) string {
	v := ""
	if bi.Main.Path == sdkModulePath {
		v = bi.Main.Version
	} else {
		for _, d := range bi.Deps {
			if d.Path == sdkModulePath {
				v = d.Version
				break
			}
		}
	}
	switch v {
	case "":
		return unknownVersion
	case "(devel)":
		return "devel"
	}
	return v
}
