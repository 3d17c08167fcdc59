"""The DRA policy pack; `policies.dra_rules` is what the tests and the offline plan import."""
