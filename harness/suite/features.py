"""Utilities and client features: ping, cancellation, progress, logging, resources,
prompts, roots, sampling, elicitation."""

from __future__ import annotations

from harness._run import Scenario

__all__ = ["SCENARIOS"]

SCENARIOS: list[Scenario] = []
