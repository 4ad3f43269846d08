// Package buildinfo says what a build of the module is: the licence every command reports
// beside its version.
package buildinfo

// License is the SPDX identifier of the licence the module is released under (LICENSE at the
// repository's root), as each command's --version prints it.
const License = "Apache-2.0"
