// The versions the Python language host (pulumi-language-python) is built against.
//
// The host's own module, github.com/pulumi/pulumi/sdk/python/cmd/pulumi-language-python/v3,
// is refused by the Go module proxy at every version (403). Its source comes from the
// archive pulumi-language-python-src.tar.gz in the vendor directory (../shared/vendor by
// default; PROVENANCE.md there: commit 1b5949891b, pkg/v3.259.0-14). Upstream's go.mod
// points pkg/v3 and sdk/v3 at the monorepo (`replace => ../../../../pkg`, `../../..`);
// build.py drops those two replaces and requires the versions below instead, which the
// proxy serves, then runs `go mod tidy` and `go build` in a copy of the source.
// v3.260.0 is the first served release after the host's commit (pkg/v3 v3.259.0-14).
// The exec script pulumi-language-python-exec is the archive's, installed beside the host.
// Nothing here is compiled: it only declares the versions (go mod edit -json reads them).
module nebius-dra-e2e/pulumi-language-python

go 1.26.6

require (
	github.com/pulumi/pulumi/pkg/v3 v3.260.0
	github.com/pulumi/pulumi/sdk/v3 v3.260.0
)
