"""A stdio "agent" that writes exact bytes: the relay tests' peer (tests/test_relay.py).

It reads its stdin line by line, keeps every line it got (as text), and answers each request by its
method, writing its stdout raw (no JSON library re-encodes anything it sends):

- ``initialize``: a fixed answer with members a re-encoding would change (``1.50``, ``"\\u00e9"``, odd
  spaces), see ``INITIALIZE``;
- ``_raw/received``: answers the lines it got so far;
- ``_raw/emit``: writes ``params.lines`` (texts) as they are, one line each, then answers;
- ``_raw/huge``: answers with a line of ``params.size`` bytes;
- ``_raw/big-note``: writes a notification of ``params.size`` bytes and more, then answers;
- ``_raw/flood``: writes ``params.count`` notifications of ``params.size`` random bytes (base64) as fast
  as it can;
- ``_raw/endless``: writes ``params.size`` bytes with no line break, then never writes again;
- ``_raw/stderr``: writes ``params.text`` to stderr, then answers;
- ``_raw/child``: starts ``sleep 300`` (in its process group) and answers its pid;
- ``_raw/die``: exits at once with code ``params.code`` (no answer);
- ``_raw/mute``: goes on reading, answers nothing any more (``_raw/received`` excepted);
- ``_raw/hang``: stops reading and writing for good (stdin is no longer read);
- anything else with an id: ``{"method": ...}``.

Run: ``python tests/peers/raw_stdio_agent.py``.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import time

INITIALIZE = (
    '{"jsonrpc":"2.0", "id":%s,"result":{"protocolVersion":1,  "agentCapabilities":{},"x-odd":[1.50,"\\u00e9",'
    '{"z":1,"a":2}]}}'
)


def write(text: str | bytes) -> None:
    data = text.encode() if isinstance(text, str) else text
    sys.stdout.buffer.write(data + b"\n")
    sys.stdout.buffer.flush()


def answer(request_id: object, result: object) -> None:
    write(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}))


def main() -> None:
    received: list[str] = []
    children = []
    mute = False
    for raw in sys.stdin.buffer:
        line = raw.rstrip(b"\n").decode("utf-8", "replace")
        received.append(line)
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if not isinstance(message, dict) or "method" not in message or "id" not in message:
            continue
        method, request_id, params = message["method"], message["id"], message.get("params") or {}
        if mute and method != "_raw/received":
            continue
        if method == "_raw/mute":
            mute = True
        elif method == "initialize":
            write(INITIALIZE % json.dumps(request_id))
        elif method == "_raw/received":
            answer(request_id, len(received) if mute else received)
        elif method == "_raw/emit":
            for text in params["lines"]:
                write(text)
            answer(request_id, {"emitted": len(params["lines"])})
        elif method == "_raw/huge":
            filler = "x" * int(params["size"])
            write(f'{{"jsonrpc":"2.0","id":{json.dumps(request_id)},"result":{{"filler":"{filler}"}}}}')
        elif method == "_raw/big-note":
            filler = "z" * int(params["size"])
            write(f'{{"jsonrpc":"2.0","method":"_vendor/big","params":{{"f":"{filler}"}}}}')
            answer(request_id, {})
        elif method == "_raw/flood":
            noise = base64.b64encode(os.urandom(int(params["size"]) * 3 // 4)).decode()  # compressed, as large
            note = f'{{"jsonrpc":"2.0","method":"_vendor/flood","params":{{"f":"{noise}"}}}}'
            for _ in range(int(params["count"])):
                write(note)
            answer(request_id, {})
        elif method == "_raw/endless":
            left = int(params["size"])
            while left > 0:
                piece = min(left, 1 << 20)
                sys.stdout.buffer.write(b"y" * piece)
                left -= piece
            sys.stdout.buffer.flush()
            time.sleep(3600)
        elif method == "_raw/stderr":
            sys.stderr.write(params["text"] + "\n")
            sys.stderr.flush()
            answer(request_id, {})
        elif method == "_raw/child":
            child = subprocess.Popen(["sleep", "300"])
            children.append(child)
            answer(request_id, {"pid": child.pid, "self": os.getpid()})
        elif method == "_raw/die":
            os._exit(int(params.get("code", 3)))
        elif method == "_raw/hang":
            time.sleep(3600)
        else:
            answer(request_id, {"method": method})


if __name__ == "__main__":
    main()
