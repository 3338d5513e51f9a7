"""Pipeline stages: pure functions over contract types; only sleuth.gateway sequences them."""
