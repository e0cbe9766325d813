"""Smoke results: one row per (tool, check), a rich table, and JUnit XML for CI."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

__all__ = ["CheckResult", "CheckStatus", "SmokeReport"]


class CheckStatus(StrEnum):
    PASS = "PASS"
    FAIL = "FAIL"
    SKIP = "SKIP"


@dataclass(frozen=True, slots=True)
class CheckResult:
    source: str
    tool: str
    check: str
    status: CheckStatus
    reason: str = ""


@dataclass
class SmokeReport:
    url: str
    results: list[CheckResult] = field(default_factory=list)

    def add(self, source: str, tool: str, check: str, status: CheckStatus, reason: str = "") -> None:
        self.results.append(CheckResult(source, tool, check, status, reason))

    def extend(self, results: Iterable[CheckResult]) -> None:
        self.results.extend(results)

    def count(self, status: CheckStatus) -> int:
        return sum(1 for r in self.results if r.status is status)

    @property
    def ok(self) -> bool:
        return self.count(CheckStatus.FAIL) == 0 and bool(self.results)

    def render(self, console: Console) -> None:
        for source in dict.fromkeys(r.source for r in self.results):
            table = Table(title=f"smoke: {source}", title_justify="left", show_lines=False)
            table.add_column("tool", overflow="fold")
            table.add_column("check")
            table.add_column("result")
            table.add_column("reason", overflow="fold")
            for r in self.results:
                if r.source != source:
                    continue
                style = {"PASS": "green", "FAIL": "bold red", "SKIP": "yellow"}[r.status.value]
                table.add_row(r.tool, r.check, f"[{style}]{r.status.value}[/{style}]", r.reason)
            console.print(table)
        console.print(
            f"{self.count(CheckStatus.PASS)} passed, {self.count(CheckStatus.FAIL)} failed, "
            f"{self.count(CheckStatus.SKIP)} skipped against {self.url}"
        )

    def to_json(self) -> dict[str, Any]:
        """The results as JSON data (`colonnade smoke --format json`)."""
        return {
            "url": self.url,
            "ok": self.ok,
            "passed": self.count(CheckStatus.PASS),
            "failed": self.count(CheckStatus.FAIL),
            "skipped": self.count(CheckStatus.SKIP),
            "results": [{**asdict(r), "status": r.status.value} for r in self.results],
        }

    def write_junit(self, path: Path) -> None:
        suites = ET.Element("testsuites", name="colonnade smoke")
        for source in dict.fromkeys(r.source for r in self.results):
            rows = [r for r in self.results if r.source == source]
            suite = ET.SubElement(
                suites,
                "testsuite",
                name=source,
                tests=str(len(rows)),
                failures=str(sum(r.status is CheckStatus.FAIL for r in rows)),
                skipped=str(sum(r.status is CheckStatus.SKIP for r in rows)),
            )
            for r in rows:
                case = ET.SubElement(suite, "testcase", classname=r.tool, name=r.check)
                if r.status is CheckStatus.FAIL:
                    ET.SubElement(case, "failure", message=r.reason)
                elif r.status is CheckStatus.SKIP:
                    ET.SubElement(case, "skipped", message=r.reason)
        path.parent.mkdir(parents=True, exist_ok=True)
        ET.ElementTree(suites).write(path, encoding="utf-8", xml_declaration=True)
