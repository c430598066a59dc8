"""Test infrastructure shared by tests and benchmarks (local servers, toy rubrics)."""
