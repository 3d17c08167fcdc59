"""Pure functions that build what the components hand to providers: Helm values, claim specs, labels, typed Args."""
