// Compiles each pattern read from stdin with Go's regexp, as the Pulumi CLI does through
// gojsonschema (schema.go: regexp.Compile), and matches it against its inputs as a JSON Schema
// "pattern" is matched (MatchString: anywhere in the text, so only ^ and $ anchor it).
//
// stdin:  [{"pattern": "...", "inputs": ["..."]}, ...]
// stdout: [{"pattern": "...", "error": "" or the compile error, "matches": [true, ...]}, ...]
package main

import (
	"encoding/json"
	"os"
	"regexp"
)

type probe struct {
	Pattern string   `json:"pattern"`
	Inputs  []string `json:"inputs"`
}

type verdict struct {
	Pattern string `json:"pattern"`
	Error   string `json:"error"`
	Matches []bool `json:"matches"`
}

func judge(p probe) verdict {
	compiled, err := regexp.Compile(p.Pattern)
	if err != nil {
		return verdict{Pattern: p.Pattern, Error: err.Error(), Matches: []bool{}}
	}
	matches := make([]bool, len(p.Inputs))
	for i, input := range p.Inputs {
		matches[i] = compiled.MatchString(input)
	}
	return verdict{Pattern: p.Pattern, Matches: matches}
}

func main() {
	var probes []probe
	if err := json.NewDecoder(os.Stdin).Decode(&probes); err != nil {
		os.Stderr.WriteString("reading probes: " + err.Error() + "\n")
		os.Exit(2)
	}
	verdicts := make([]verdict, len(probes))
	for i, p := range probes {
		verdicts[i] = judge(p)
	}
	if err := json.NewEncoder(os.Stdout).Encode(verdicts); err != nil {
		os.Stderr.WriteString("writing verdicts: " + err.Error() + "\n")
		os.Exit(2)
	}
}
