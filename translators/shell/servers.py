"""Programs that serve a model to clients, and the port each listens on when its command names none.

One table for everyone who asks "does this job serve?": the plan classes a job
as serving when its command starts one of these, and the Kubernetes writer
makes a multi-node server a LeaderWorkerSet with the server's port behind a
Service. A name with punctuation or a space in it (``vllm serve``,
``sglang.launch_server``) is found anywhere in a command line; a plain word
(``tritonserver``) only as a whole word, as folders and registries named
"serving" belong to batch jobs too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Server:
    name: str
    names: tuple[str, ...]  # how a command line starts it, in lower case
    port: int | None  # the port it serves on when the command gives none (its documented default)
    port_options: tuple[str, ...] = ("--port",)  # the options that set that port


# The first entry that a command line names wins: vLLM's "vllm.entrypoints.openai.api_server" is
# vLLM's before it is a generic API server.
SERVERS = (
    Server("vLLM", ("vllm serve", "vllm.entrypoints"), 8000),
    Server("SGLang", ("sglang.launch_server",), 30000),
    Server("Text Generation Inference", ("text-generation-launcher",), 3000),
    Server("Triton Inference Server", ("tritonserver",), 8000, ("--http-port",)),
    Server("Ray Serve", ("serve run", "serve deploy"), 8000, ()),  # the port is in its config
    Server("an API server", ("api_server",), None),
)
SERVER_WORDS = frozenset(n for s in SERVERS for n in s.names if n.isalnum())
SERVING_PHRASES = tuple(n for s in SERVERS for n in s.names if not n.isalnum())


def server_in(text: str) -> Server | None:
    """The server a command line (or a script's text) starts, if it names one."""
    lowered = text.lower()
    for server in SERVERS:
        for name in server.names:
            if name.isalnum() and re.search(rf"(?<![a-z0-9]){name}(?![a-z0-9])", lowered):
                return server
            if not name.isalnum() and name in lowered:
                return server
    return None


__all__ = ["SERVERS", "SERVER_WORDS", "SERVING_PHRASES", "Server", "server_in"]
