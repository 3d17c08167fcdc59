// Compiles each pattern read from stdin as ajv and editors do, `new RegExp(pattern, "u")` (ECMA-262
// with the Unicode flag, ajv's default `unicodeRegExp`), and matches it against its inputs as a JSON
// Schema "pattern" is matched: anywhere in the text, so only ^ and $ anchor it.
//
// stdin:  [{"pattern": "...", "inputs": ["..."]}, ...]
// stdout: [{"pattern": "...", "error": "" or the compile error, "matches": [true, ...]}, ...]
"use strict";
const fs = require("fs");

function judge({ pattern, inputs }) {
  let compiled;
  try {
    compiled = new RegExp(pattern, "u");
  } catch (error) {
    return { pattern, error: error.message, matches: [] };
  }
  return { pattern, error: "", matches: inputs.map((input) => compiled.test(input)) };
}

const probes = JSON.parse(fs.readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(probes.map(judge)));
