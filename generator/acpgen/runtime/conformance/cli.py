"""The command line::

    python -m <package>.conformance agent [options] -- AGENT COMMAND...

Exit 0 when the agent is conformant, 1 when it is not (also when it never answered),
2 on a usage error."""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from collections.abc import Sequence

from . import agent_scenarios, client_run, probe_agent, report, trace_check
from .judge import Kit
from .requirements import outcomes, verdict
from .runner import DEFAULT_CANCEL_PROMPT, Options, run_agent_scenarios


def main(argv: Sequence[str] | None, kit: Kit, *, prog: str) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["probe-agent"]:  # the agent `conformance client` hands the client
        return probe_agent.main(args[1:], kit)
    command: list[str] = []
    if "--" in args:
        at = args.index("--")
        args, command = args[:at], args[at + 1 :]
    parser = _parser(prog)
    options = parser.parse_args(args)
    if options.side == "trace":
        if options.trace is None or command or options.url is not None:
            parser.error("trace takes the trace file and nothing else: ... trace TRACE")
        return _trace(kit, options, prog, argv)
    if options.trace is not None:
        parser.error(
            f"unexpected argument {options.trace!r}: "
            "the agent's command goes after `--`"
        )
    if options.side == "client":
        if not command or options.url is not None:
            parser.error(
                "give the client's command after `--`, {agent} where the agent goes "
                "({url} with --serve)"
            )
        if options.serve and importlib.util.find_spec("uvicorn") is None:
            parser.error(
                "--serve needs uvicorn (pip install uvicorn) to serve the probe"
            )
        return _client(kit, options, command, prog, argv, parser)
    if options.url is not None and command:
        parser.error("give either --url or the agent's command after `--`, not both")
    if not command and options.url is None:
        parser.error(
            "give the agent's command after `--` (... agent -- python my_agent.py), "
            "or --url for a remote agent"
        )
    env = _env(options, parser)
    run_options = Options(
        command=tuple(command),
        env=env,
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
    run = run_agent_scenarios(
        kit, run_options, agent_scenarios.SCENARIOS, lambda name: _covers(kit, name)
    )
    judged = [r for r in kit.requirements if r.side in ("agent", "both")]
    results = outcomes(judged, run.judge.checks)
    found = verdict(
        results,
        blocked_by_auth=run.blocked_by_auth,
        blocked_by_version=run.blocked_by_version,
    )
    sys.stdout.write(report.terminal(run, results, found, verbose=options.verbose))
    if options.report_json:
        report.write(
            options.report_json,
            report.dumps(
                report.as_json(run, results, found, [prog, *(argv or sys.argv[1:])])
            ),
        )
    if options.junit:
        report.write(options.junit, report.junit(results, found))
    return 0 if found.conformant else 1


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


def _client(
    kit: Kit,
    options: argparse.Namespace,
    command: list[str],
    prog: str,
    argv: Sequence[str] | None,
    parser: argparse.ArgumentParser,
) -> int:
    try:
        json.loads(options.agent_capabilities)
    except ValueError:
        parser.error("--agent-capabilities wants a JSON object")
    env = _env(options, parser)
    run = client_run.run_client(
        kit,
        command,
        env=env,
        cwd=options.agent_cwd,
        capabilities=options.agent_capabilities,
        timeout=options.scenario_timeout,
        version_mismatch=not options.no_version_mismatch,
        wait=options.timeout,
        remote=options.serve,
    )
    ids = set(client_run.judged(kit))
    results = outcomes([r for r in kit.requirements if r.id in ids], run.checks)
    found = verdict(
        results, unfinished="the client did not finish" if run.error else ""
    )
    lines = [
        f"ACP conformance of the client: {' '.join(command)}",
        f"schema: {kit.schema}",
    ]
    lines.append(
        f"the client exited {run.exit_code}" if run.exit_code is not None else run.error
    )
    lines += report.tiers(results, found, verbose=options.verbose)
    if run.error:
        lines += ["", run.error]
    sys.stdout.write("\n".join([*lines, "", found.line()]) + "\n")
    if options.report_json:
        data = report.trace_json(
            "(recorded by the probe agent)",
            kit,
            results,
            found,
            [prog, *(argv or sys.argv[1:])],
        )
        data |= {
            "side": "client",
            "client_command": run.command,
            "probe_agent_command": run.probe,
            "client_exit_code": run.exit_code,
            "error": run.error or None,
            "client_stderr": run.stderr,
            "transcript": [
                {"dir": "received" if not e.outgoing else "sent", "message": e.message}
                for e in run.entries
            ],
        }
        if run.mismatch is not None:
            data["version_mismatch"] = {
                "probe_protocol_version": probe_agent.MISMATCH_VERSION,
                "client_exit_code": run.mismatch.exit_code,
                "closed_connection": run.mismatch.closed,
                "transcript": [
                    {
                        "dir": "received" if not e.outgoing else "sent",
                        "message": e.message,
                    }
                    for e in run.mismatch.entries
                ],
            }
        report.write(options.report_json, report.dumps(data))
    if options.junit:
        report.write(options.junit, report.junit(results, found))
    return 0 if found.conformant else 1


def _trace(
    kit: Kit, options: argparse.Namespace, prog: str, argv: Sequence[str] | None
) -> int:
    try:
        with open(options.trace, encoding="utf-8") as file:
            entries = trace_check.read_trace(file)
    except (OSError, UnicodeDecodeError, trace_check.TraceError) as error:
        sys.stderr.write(
            f"{prog}: error: cannot read the trace {options.trace}: {error}\n"
        )
        return 2
    agents = kit.agent_capabilities or kit.client_capabilities
    checks = trace_check.check_trace(kit, entries, agents)
    judged = set(trace_check.judged_requirements(kit))
    results = outcomes([r for r in kit.requirements if r.id in judged], checks)
    found = verdict([o for o in results if o.status != "NOT_TESTED"])
    lines = [f"ACP conformance of a trace: {options.trace} ({len(entries)} messages)"]
    lines += [
        f"schema: {kit.schema}",
        "(only what a trace shows is judged: no driving)",
    ]
    lines += report.tiers(results, found, verbose=options.verbose)
    sys.stdout.write("\n".join([*lines, "", found.line()]) + "\n")
    command = [prog, *(argv or sys.argv[1:])]
    if options.report_json:
        data = report.trace_json(options.trace, kit, results, found, command)
        report.write(options.report_json, report.dumps(data))
    if options.junit:
        report.write(options.junit, report.junit(results, found))
    return 0 if found.conformant else 1


def _covers(kit: Kit, name: str) -> tuple[str, ...]:
    found = []
    for item in agent_scenarios.COVERS.get(name, ()):
        if item.startswith("handler:"):
            rid = kit.derived("required-handler", item.removeprefix("handler:"))
            if rid:
                found.append(rid)
        else:
            found.append(item)
    return tuple(found)


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Check an ACP agent against the protocol of this package's schema.",
    )
    parser.add_argument(
        "side",
        choices=("agent", "client", "trace"),
        help="what to check: an agent, a client (with the probe agent), a trace",
    )
    parser.add_argument(
        "trace", nargs="?", help="with trace: the trace file (JSON lines)"
    )
    parser.add_argument(
        "--agent-capabilities",
        default="{}",
        metavar="JSON",
        help="client: what the probe agent advertises (default: nothing)",
    )
    parser.add_argument(
        "--no-version-mismatch",
        action="store_true",
        help="client: skip the second run, where the probe answers initialize with a "
        "version the client does not speak (ACP-CLIENT-INIT-005 is then NOT_TESTED)",
    )
    parser.add_argument(
        "--serve",
        action="store_true",
        help="client: serve the probe agent over the network (Streamable HTTP and "
        "WebSocket, by the relay) for a client of remote agents; {url} in its command "
        "(and ACP_CONFORMANCE_URL) is the address",
    )
    parser.add_argument(
        "--url", help="check the remote agent at this address instead of a command"
    )
    parser.add_argument(
        "--transport",
        choices=("http", "ws"),
        default="http",
        help="with --url: Streamable HTTP (default) or a WebSocket",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=30.0,
        help="seconds to wait for each answer (default 30)",
    )
    parser.add_argument(
        "--startup-timeout",
        type=float,
        default=30.0,
        help="seconds to wait for the first answer (default 30)",
    )
    parser.add_argument(
        "--scenario-timeout",
        type=float,
        default=120.0,
        help="seconds a scenario may run (default 120)",
    )
    parser.add_argument(
        "--close-grace",
        type=float,
        default=2.0,
        help="seconds the agent has to exit after its stdin closes (default 2)",
    )
    parser.add_argument(
        "--cancel-prompt",
        default=DEFAULT_CANCEL_PROMPT,
        help="a prompt that keeps the agent busy long enough to cancel it",
    )
    parser.add_argument(
        "--auth-method", help="authenticate with this method id after every initialize"
    )
    parser.add_argument(
        "--agent-env",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="set in the agent's environment (repeatable)",
    )
    parser.add_argument("--agent-cwd", help="the folder the agent runs in")
    parser.add_argument(
        "-k",
        action="append",
        metavar="WORD",
        help="run only the scenarios whose name or requirement ids contain WORD "
        "(repeatable)",
    )
    parser.add_argument(
        "--report-json", metavar="PATH", help="write the JSON report there"
    )
    parser.add_argument("--junit", metavar="PATH", help="write JUnit XML there")
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="list every requirement, passed ones too",
    )
    return parser
