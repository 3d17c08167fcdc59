// The readers the Pulumi CLI reads its files with, run on the same documents as the project's loader
// (e2e/yaml_v3/test_duplicate_keys.py): gopkg.in/yaml.v3 v3.0.1, the version the CLI v3.274.0 pins
// (e2e/pulumi/cli/go.mod), for Pulumi.yaml and stack files (sdk/go/common/encoding/marshal.go), and
// Go's encoding/json for `--policy-pack-config` (pkg/resource/analyzer/config.go).
module nebius-dra-e2e/yaml-v3

go 1.24

require gopkg.in/yaml.v3 v3.0.1
