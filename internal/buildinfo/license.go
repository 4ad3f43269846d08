package buildinfo

// License is the SPDX identifier of the licence the module is released under (LICENSE at the
// repository's root), as each command's --version prints it.
const License = "Apache-2.0"
