"""Fuzzing Nimble: random programs run against the reference interpreter (`differential`)."""
