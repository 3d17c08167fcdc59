// The Go regexp engine (RE2 syntax) that the Pulumi CLI compiles policy config schemas with;
// tests/test_regex_engines.py runs it. Standard library only, so no module is ever downloaded.
module nebius-dra/tests/regex_engines/go

go 1.24
