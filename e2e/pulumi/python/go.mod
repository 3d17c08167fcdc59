// Wrapper module for the Python language host (pulumi-language-python).
//
// github.com/pulumi/pulumi/sdk/python/cmd/pulumi-language-python/v3 is NOT served by
// the Go module proxy this project can reach: the version list, @latest, tags and every
// pseudo-version tried are refused with 403 "This module version is not available."
// (exact errors in BUILD-NOTES.md). So nothing is required here yet, and build.py
// reports the host as unavailable.
//
// When a pseudo-version is served (the one at the commit of tag v3.272.0, or the
// CLI's release), add
//
//	tool github.com/pulumi/pulumi/sdk/python/cmd/pulumi-language-python/v3
//	require github.com/pulumi/pulumi/sdk/python/cmd/pulumi-language-python/v3 <pseudo-version>
//
// and the `replace` lines of that module's go.mod (if any), run `go mod tidy` here,
// and build.py builds the host and installs pulumi-language-python-exec (a file of the
// sdk/v3 module, python/cmd/) beside it.
module nebius-dra-e2e/pulumi-language-python

go 1.26.6
