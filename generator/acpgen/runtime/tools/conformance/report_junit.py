"""JUnit XML of a run, mirroring the verdict: one test case per requirement judged,
and one for the verdict. A case fails exactly where the verdict counts it (a
MANDATORY or CAPABILITY FAIL, a MANDATORY NOT_TESTED, with its reason); an ADVISORY
or INFORMATIONAL FAIL passes with the finding in its output and properties; SKIPPED
and other NOT_TESTED are skipped with their reason. The failures are zero exactly
when the run is conformant."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from xml.etree import ElementTree as ET

from .requirements import Outcome, Verdict

COUNTED = ("MANDATORY", "CAPABILITY")


def junit(
    results: Sequence[Outcome], verdict: Verdict, name: str = "acp-conformance"
) -> bytes:
    suite = ET.Element("testsuite", name=name, tests=str(len(results) + 1))
    failures = skipped = 0
    for o in results:
        r = o.requirement
        case = ET.SubElement(
            suite, "testcase", classname=f"acp.{r.tier.lower()}", name=r.id
        )
        properties = ET.SubElement(case, "properties")
        for key, value in (
            ("tier", r.tier),
            ("status", o.status),
            ("citation", r.citation.url),
        ):
            ET.SubElement(properties, "property", name=key, value=value)
        message = "; ".join(
            f.message for f in o.findings if f.status == o.status and f.message
        )[:2000]
        message = message or o.why_not_tested
        counted = r.tier in COUNTED and (
            o.status == "FAIL" or (o.status == "NOT_TESTED" and r.tier == "MANDATORY")
        )
        if counted:
            failures += 1
            failure = ET.SubElement(
                case,
                "failure",
                message=f"{o.status}: {message}" if message else o.status,
            )
            failure.text = f"{r.what}\n{r.citation.url}"
        elif o.status in ("SKIPPED", "NOT_TESTED"):
            skipped += 1
            ET.SubElement(
                case,
                "skipped",
                message=f"{o.status}: {message}" if message else o.status,
            )
        elif o.status == "FAIL":
            ET.SubElement(
                case, "system-out"
            ).text = f"{r.tier} FAIL (does not change the verdict): {message}"
    case = ET.SubElement(suite, "testcase", classname="acp", name="verdict")
    if not verdict.conformant:
        failures += 1
        ET.SubElement(case, "failure", message=verdict.line())
    suite.set("failures", str(failures))
    suite.set("skipped", str(skipped))
    ET.SubElement(suite, "system-out").text = verdict.line()
    data: bytes = ET.tostring(suite, encoding="utf-8", xml_declaration=True)
    return data


def write(path: str, data: bytes) -> None:
    Path(path).write_bytes(data)
