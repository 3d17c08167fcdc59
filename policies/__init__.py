"""The DRA policy pack: `policies.dra_guardrails` is what the tests and the offline plan import."""
