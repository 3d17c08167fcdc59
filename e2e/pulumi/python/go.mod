// Wrapper module for the Python side of the Pulumi engine in the e2e tests.
//
// The Python language host, github.com/pulumi/pulumi/sdk/python/cmd/pulumi-language-python/v3,
// is NOT served by the Go module proxy this project can reach (every list, @latest and
// pseudo-version request is refused; see BUILD-NOTES.md). When it becomes available, add
//
//	tool github.com/pulumi/pulumi/sdk/python/cmd/pulumi-language-python/v3
//	require github.com/pulumi/pulumi/sdk/python/cmd/pulumi-language-python/v3 <pseudo-version>
//
// and run `go mod tidy` here; build.py then builds it and installs the
// pulumi-language-python-exec script from the sdk/v3 module beside it.
//
// Without that host, the CLI runs a Python policy pack through the upstream
// policy shim `pulumi-analyzer-policy-python` (runs `python -m pulumi.policy`).
// sdk/v3 v3.220.0 is the last release whose module ships it (python/dist/);
// build.py copies that file out of this module. Nothing here is compiled.
module nebius-dra-e2e/pulumi-language-python

go 1.26.6

require github.com/pulumi/pulumi/sdk/v3 v3.220.0
