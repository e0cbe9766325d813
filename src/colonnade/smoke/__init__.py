"""`colonnade smoke`: the contract describes, the smoke proves — against a running gateway."""

from colonnade.smoke.report import CheckResult, SmokeReport
from colonnade.smoke.runner import run_smoke

__all__ = ["CheckResult", "SmokeReport", "run_smoke"]
