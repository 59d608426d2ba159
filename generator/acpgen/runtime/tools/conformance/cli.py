"""The command line::

    acpgen conformance agent [options] -- AGENT COMMAND...
    acpgen conformance agent [options] --url URL [--transport http|ws]
    acpgen conformance client [options] -- CLIENT COMMAND... {agent} ...
    acpgen conformance trace TRACE [options]

(``python -m <package>.conformance`` in a copy vendored ``--with conformance``). Exit
0 when the peer is conformant, 1 when it is not, 2 when it could not be checked (a
usage error, an agent that cannot be started or reached, a client that never used the
probe)."""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from . import (
    client_run,
    probe_agent,
    report_json,
    report_junit,
    report_text,
    trace_check,
)
from .agent_run import CannotRun, Run, run_agent
from .kit import Kit
from .options import parser as make_parser
from .requirements import Outcome, Verdict, outcomes, verdict
from .scenario import Options

USAGE = 2


def main(
    argv: Sequence[str] | None, kit: Kit, *, prog: str, authenticate: Any = None
) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["probe-agent"]:  # the agent `conformance client` hands the client
        return probe_agent.main(args[1:], kit)
    command: list[str] = []
    if "--" in args:
        at = args.index("--")
        args, command = args[:at], args[at + 1 :]
    parser = make_parser(prog)
    options, unknown = parser.parse_known_args(args)
    line = [prog, *(argv if argv is not None else sys.argv[1:])]
    if unknown:
        _forgot_dashes(parser, options, unknown, command)
    try:
        if options.side == "trace":
            return _trace(kit, parser, options, command, line)
        if options.trace is not None:
            parser.error(
                f"unexpected argument {options.trace!r}: the command goes after `--`"
            )
        if options.side == "client":
            return _client(kit, parser, options, command, line)
        return _agent(kit, parser, options, command, line, authenticate)
    except CannotRun as error:
        print(f"{prog}: error: {error}", file=sys.stderr)
        return USAGE


def _forgot_dashes(
    parser: argparse.ArgumentParser,
    options: argparse.Namespace,
    unknown: list[str],
    command: list[str],
) -> NoReturn:
    words = [w for w in [options.trace, *unknown] if w]
    if (
        not command
        and options.side in ("agent", "client")
        and words
        and not words[0].startswith("-")
    ):
        parser.error(
            f"unrecognized arguments: {' '.join(unknown)}; the {options.side}'s "
            "command goes "
            f"after `--`: {parser.prog} {options.side} -- {' '.join(words)}"
        )
    parser.error(f"unrecognized arguments: {' '.join(unknown)}")


def _cut(text: str) -> str:
    limit = report_text.LINE
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _env(
    options: argparse.Namespace, parser: argparse.ArgumentParser
) -> dict[str, str]:
    env = {}
    for item in options.agent_env:
        key, sep, value = item.partition("=")
        if not sep or not key:
            parser.error(f"--agent-env wants KEY=VALUE, not {item!r}")
        env[key] = value
    return env


def _agent_options(
    parser: argparse.ArgumentParser, options: argparse.Namespace, command: list[str]
) -> Options:
    if options.url is not None and command:
        parser.error("give either --url or the agent's command after `--`, not both")
    if not command and options.url is None:
        parser.error(
            "give the agent's command after `--` (... agent -- python my_agent.py), "
            "or --url for a remote agent"
        )
    if options.jobs < 1:
        parser.error("--jobs wants a number of scenarios, 1 or more")
    return Options(
        command=tuple(command),
        env=_env(options, parser),
        cwd=options.agent_cwd,
        url=options.url,
        transport=options.transport,
        timeout=options.timeout,
        startup_timeout=options.startup_timeout,
        scenario_timeout=options.scenario_timeout,
        close_grace=options.close_grace,
        cancel_prompt=options.cancel_prompt,
        auth_method=options.auth_method,
        select=tuple(options.k or ()),
    )


def _agent(
    kit: Kit,
    parser: argparse.ArgumentParser,
    options: argparse.Namespace,
    command: list[str],
    line: list[str],
    authenticate: Any,
) -> int:
    run = run_agent(
        kit, _agent_options(parser, options, command), authenticate, options.jobs
    )
    judged = kit.registry.judged("agent", ("agent", "both"))
    results = outcomes(judged, run.judge.findings, run.why_not_tested)
    found = verdict(results, blocked=run.blocked)
    unjudged = kit.registry.unjudged(("agent", "both"))
    head, notes = _agent_head(kit, options, command, run)
    _print(head, results, found, unjudged, notes, options.verbose)
    evidence = {
        r.name: {
            "transcript": [x for t in r.transcripts for x in t.as_json()],
            "stderr": r.stderr,
        }
        for r in run.scenarios
    }
    disagreements = run.judge.disagreements
    extra = _agent_extra(options, command, run)
    _reports(
        kit,
        options,
        "agent",
        line,
        results,
        found,
        unjudged,
        disagreements,
        extra,
        evidence,
    )
    return 0 if found.conformant else 1


def _agent_head(
    kit: Kit, options: argparse.Namespace, command: list[str], run: Run
) -> tuple[list[str], list[str]]:
    """The lines above the agent's results, and the notes below them."""
    target = options.url or " ".join(command)
    over = f" ({options.transport})" if options.url else ""
    head = [f"ACP conformance of the agent: {target}{over}", f"schema: {kit.schema}"]
    if isinstance(run.agent_info, dict):
        info = run.agent_info
        head.append(f"agent: {info.get('name')} {info.get('version')}")
    notes = [_cut(f"scenario {r.name}: {r.error}") for r in run.scenarios if r.error]
    if options.k:
        notes.append("note: -k left requirements NOT_TESTED")
    if run.judge.disagreements:
        notes.append(
            f"note: the schema and the models read {len(run.judge.disagreements)} "
            "messages differently (see --report-json)"
        )
    return head, notes


def _agent_extra(
    options: argparse.Namespace, command: list[str], run: Run
) -> dict[str, Any]:
    """What the JSON report holds about the agent's run."""
    return {
        "agent_command": command,
        "agent_url": options.url,
        "transport": options.transport if options.url else "stdio",
        "negotiated_version": run.protocol_version,
        "advertised": {
            "agent": {
                "agentCapabilities": run.advertised,
                "authMethods": run.auth_methods,
                "agentInfo": run.agent_info,
            },
            "client": {"clientCapabilities": {}},
        },
        "scenarios": [
            {
                "name": r.name,
                "seconds": r.seconds,
                "error": r.error or None,
                "blocked": r.blocked or None,
                "exited_on_close": r.exited_on_close,
            }
            for r in run.scenarios
        ],
    }


def _client_run(
    kit: Kit,
    parser: argparse.ArgumentParser,
    options: argparse.Namespace,
    command: list[str],
) -> client_run.ClientRun:
    """The client's run against the probe (a client that never spoke to it: none)."""
    if not command or options.url is not None:
        parser.error(
            "give the client's command after `--`, {agent} where the agent goes ({url} "
            "with --serve)"
        )
    if options.serve and importlib.util.find_spec("uvicorn") is None:
        parser.error("--serve needs uvicorn (pip install uvicorn) to serve the probe")
    try:
        json.loads(options.agent_capabilities)
    except ValueError:
        parser.error("--agent-capabilities wants a JSON object")
    run = client_run.run_client(
        kit,
        command,
        env=_env(options, parser),
        cwd=options.agent_cwd,
        capabilities=options.agent_capabilities,
        timeout=options.scenario_timeout,
        version_mismatch=not options.no_version_mismatch,
        wait=options.timeout,
        remote=options.serve,
    )
    if not client_run.spoke(run) and not run.error:
        where = "{url}" if options.serve else "{agent}"
        variable = "ACP_CONFORMANCE_URL" if options.serve else "ACP_CONFORMANCE_AGENT"
        raise CannotRun(
            f"the client never spoke to the probe agent (exit code {run.exit_code}): "
            f"pass {where} or read {variable}, e.g. -- {' '.join(command)} {where}"
        )
    return run


def _client(
    kit: Kit,
    parser: argparse.ArgumentParser,
    options: argparse.Namespace,
    command: list[str],
    line: list[str],
) -> int:
    run = _client_run(kit, parser, options, command)
    judged = kit.registry.judged("client", ("client", "both"))
    disagreements: list[dict[str, Any]] = []
    results = outcomes(judged, client_run.judge_run(kit, run, disagreements))
    unfinished = "the client did not finish" if run.error else ""
    found = verdict(results, unfinished=unfinished)
    exited = f"the client exited {run.exit_code}"
    head = [
        f"ACP conformance of the client: {' '.join(command)}",
        f"schema: {kit.schema}",
        exited if run.exit_code is not None else run.error,
    ]
    unjudged = kit.registry.unjudged(("client", "both"))
    notes = [run.error] if run.error else []
    _print(head, results, found, unjudged, notes, options.verbose)
    extra = _client_extra(run)
    _reports(
        kit, options, "client", line, results, found, unjudged, disagreements, extra
    )
    return 0 if found.conformant else 1


def _client_extra(run: client_run.ClientRun) -> dict[str, Any]:
    """What the JSON report holds about the client's run."""
    transcript = [
        {"dir": "received" if not e.outgoing else "sent", "message": e.message}
        for e in run.entries
    ]
    extra: dict[str, Any] = {
        "client_command": run.command,
        "probe_agent_command": run.probe,
        "client_exit_code": run.exit_code,
        "error": run.error or None,
        "client_stderr": run.stderr,
        "transcript": transcript,
    }
    if run.mismatch is not None:
        extra["version_mismatch"] = {
            "probe_protocol_version": probe_agent.MISMATCH_VERSION,
            "client_exit_code": run.mismatch.exit_code,
            "closed_connection": run.mismatch.closed,
        }
    return extra


def _trace(
    kit: Kit,
    parser: argparse.ArgumentParser,
    options: argparse.Namespace,
    command: list[str],
    line: list[str],
) -> int:
    if options.trace is None or command or options.url is not None:
        parser.error("trace takes the trace file and nothing else: ... trace TRACE")
    try:
        with open(options.trace, encoding="utf-8") as file:
            entries = trace_check.read_trace(file)
    except (OSError, UnicodeDecodeError, trace_check.TraceError) as error:
        raise CannotRun(f"cannot read the trace {options.trace}: {error}") from None
    if not entries:
        raise CannotRun(f"the trace {options.trace} holds no message")
    disagreements: list[dict[str, Any]] = []
    findings = trace_check.check_trace(kit, entries, disagreements=disagreements)
    judged = kit.registry.judged("trace", ("agent", "client", "both"))
    results = outcomes(judged, findings)
    shown = [o for o in results if o.status != "NOT_TESTED"]
    found = verdict(shown)
    head = [
        f"ACP conformance of a trace: {options.trace} ({len(entries)} messages)",
        f"schema: {kit.schema}",
        "(only what a trace shows is judged: no driving)",
    ]
    _print(head, results, found, [], [], options.verbose)
    extra = {"trace": options.trace}
    _reports(kit, options, "trace", line, results, found, [], disagreements, extra)
    return 0 if found.conformant else 1


def _print(
    head: list[str],
    results: list[Outcome],
    found: Verdict,
    unjudged: list[Any],
    notes: list[str],
    verbose: bool,
) -> None:
    lines = [*head, *report_text.tiers(results, found, verbose=verbose)]
    lines += report_text.unjudged(unjudged)
    if notes:
        lines += ["", *notes]
    sys.stdout.write("\n".join([*lines, "", found.line()]) + "\n")


def _reports(
    kit: Kit,
    options: argparse.Namespace,
    side: str,
    line: list[str],
    results: list[Outcome],
    found: Verdict,
    unjudged: list[Any],
    disagreements: list[dict[str, Any]],
    extra: dict[str, Any],
    evidence: dict[str, dict[str, Any]] | None = None,
) -> None:
    if options.report_json:
        data = report_json.report(
            kit=kit,
            side=side,
            command=line,
            results=results,
            verdict=found,
            unjudged=unjudged,
            disagreements=disagreements,
            evidence=evidence or {},
            extra=extra,
        )
        report_json.write(options.report_json, data)
    if options.junit:
        report_junit.write(options.junit, report_junit.junit(results, found))
