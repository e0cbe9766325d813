"""The order of the stages: the one place that decides it.

Stages that wrap execution (output validation) come right before the stage they wrap.
"""

from __future__ import annotations

from colonnade.adapters.http import HttpAdapter
from colonnade.calls.pipeline import Pipeline
from colonnade.calls.stages.approval import ApprovalGate
from colonnade.calls.stages.dry_run import DryRun
from colonnade.calls.stages.execute import Execute
from colonnade.calls.stages.validate_input import InputValidation
from colonnade.calls.stages.validate_output import OutputValidation

__all__ = ["build_pipeline"]


def build_pipeline(http: HttpAdapter) -> Pipeline:
    return Pipeline(
        [
            ApprovalGate(),  # 5 approval gate (fail-closed until the approval workflow lands)
            InputValidation(),  # 6 validate input
            DryRun(),  # dry runs stop here: validated and authorized, not executed
            OutputValidation(),  # 9 validate output (wraps 8)
            Execute(http),  # 8 execute within the deadline
        ]
    )
