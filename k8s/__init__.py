"""Kubernetes helpers that the analyzer, the collector and the emulator share: label and field
selectors, resource types, quantities, timestamps, Helm's release records, and kubectl's server-
and client-side table printing. It imports none of those packages."""
