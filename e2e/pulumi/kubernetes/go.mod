// The versions the Kubernetes resource provider (pulumi-resource-kubernetes) is built against.
//
// The proxy serves provider/v4 only at the commit of tag v4.25.0, whose schema has no
// resource.k8s.io/v1. The source comes from the archive pulumi-kubernetes-provider-src.tar.gz
// in the vendor directory (../shared/vendor by default; PROVENANCE.md there: commit
// 94977969d, v4.32.0-27). Its provider/go.mod needs two changes to build from the proxy:
//   - `replace github.com/pulumi/pulumi-kubernetes/sdk/v4 => ../sdk` is dropped (the archive
//     has no sdk/) and sdk/v4 is required at the release below;
//   - github.com/fluxcd/pkg/ssa is required at the release below (the pseudo-version
//     v0.71.1-0.20260424094917-4f94dc680419 that upstream pins is refused, 403).
// build.py applies both with `go mod edit`, runs `go mod tidy`, generates schema.json with the
// provider's own pulumi-gen-kubernetes from the k8s.io/kubernetes OpenAPI specs (the Makefile's
// KUBE_VERSION and the legacy versions pulumi-gen-kubernetes merges), then builds the provider.
// The provider reports the sdk/v4 release below as its version.
// Nothing here is compiled: it only declares the versions (go mod edit -json reads them).
module nebius-dra-e2e/pulumi-resource-kubernetes

go 1.26.6

require (
	github.com/fluxcd/pkg/ssa v0.72.0
	github.com/pulumi/pulumi-kubernetes/sdk/v4 v4.32.0
)
