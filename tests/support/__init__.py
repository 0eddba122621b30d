"""Helpers shared by the unit, integration and end-to-end tests (no tests here)."""
