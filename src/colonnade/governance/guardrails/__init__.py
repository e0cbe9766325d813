"""Guardrails: detectors of sensitive data and model-aimed text in arguments and results (`scan`),
and the action each finding kind takes for a tool (`actions`)."""
