// Validates documents against a JSON Schema (draft 2020-12) with ajv in its default, strict mode,
// as an editor's validator would, and words each error as a user would read it.
//
// stdin:  {"schema": {...}, "documents": {"name": {...}, ...}}
// stdout: {"warnings": [what strict mode logged], "errors": {"name": ["/config key \"x\" must be ...", ...]}}
// A schema ajv refuses to compile (an invalid regex among them) exits 2 with ajv's message.
"use strict";
const fs = require("fs");
const Ajv2020 = require("ajv/dist/2020");

function worded(error) {
  const where = error.instancePath || "/";
  const key = error.propertyName === undefined ? "" : ` key ${JSON.stringify(error.propertyName)}`;
  const allowed = error.params.allowedValues ? `: ${error.params.allowedValues.join(", ")}` : "";
  return `${where}${key} ${error.message}${allowed}`;
}

const { schema, documents } = JSON.parse(fs.readFileSync(0, "utf8"));
const warnings = [];
const log = (...parts) => warnings.push(parts.join(" "));
let validate;
try {
  validate = new Ajv2020({ allErrors: true, logger: { log, warn: log, error: log } }).compile(schema);
} catch (error) {
  process.stderr.write(`ajv refuses the schema: ${error.message}\n`);
  process.exit(2);
}
const errors = {};
for (const [name, document] of Object.entries(documents)) {
  errors[name] = validate(document) ? [] : validate.errors.map(worded);
}
process.stdout.write(JSON.stringify({ warnings, errors }));
