"""The input model: the validated shape of the stack file, by concern (fields, node groups, claim templates, prices, the stack)."""
