"""Resilience policies: error rules, retry, circuit breakers, quota pools, hedging,
the degradation ladder."""
