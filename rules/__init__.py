"""The shipped analyzer rules: one YAML file per rule, named by its id (data only)."""
