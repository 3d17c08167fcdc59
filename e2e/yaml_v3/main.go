// Reads each document from stdin as the Pulumi CLI reads its files: YAML with yaml.v3's Unmarshal into a
// map, as workspace.LoadProjectStack does, and JSON with encoding/json into a map, as
// parsePolicyPackConfig does.
//
// stdin:  [{"format": "yaml" or "json", "text": "..."}, ...]
// stdout: [{"error": "" or the reader's error, "value": the map it read}, ...]
package main

import (
	"encoding/json"
	"os"

	"gopkg.in/yaml.v3"
)

type document struct {
	Format string `json:"format"`
	Text   string `json:"text"`
}

type reading struct {
	Error string         `json:"error"`
	Value map[string]any `json:"value"`
}

func read(d document) reading {
	value := map[string]any{}
	var err error
	if d.Format == "json" {
		err = json.Unmarshal([]byte(d.Text), &value)
	} else {
		err = yaml.Unmarshal([]byte(d.Text), &value)
	}
	if err != nil {
		return reading{Error: err.Error()}
	}
	return reading{Value: value}
}

func main() {
	var documents []document
	if err := json.NewDecoder(os.Stdin).Decode(&documents); err != nil {
		os.Stderr.WriteString("reading documents: " + err.Error() + "\n")
		os.Exit(2)
	}
	readings := make([]reading, len(documents))
	for i, d := range documents {
		readings[i] = read(d)
	}
	if err := json.NewEncoder(os.Stdout).Encode(readings); err != nil {
		os.Stderr.WriteString("writing readings: " + err.Error() + "\n")
		os.Exit(2)
	}
}
