#!/usr/bin/python3
"""pyecho: a nexus plugin in Python, written from docs/plugins.md alone.

Tools:
  echo   returns its text
  count  counts its calls in the plugin's data folder for this project
  slow   waits up to `seconds`, and stops as soon as nexus cancels the call

It serves nexus.plugin.v1.PluginService and go-plugin's GRPCController
(Shutdown), with the TLS identity nexus issues, on a Unix socket. Run
generate.sh first: it writes the gRPC stubs into gen/.
"""

import json
import os
import sys
import threading
import time
from concurrent import futures

HERE = os.path.dirname(os.path.realpath(__file__))
sys.path.insert(0, os.path.join(HERE, "gen"))

import grpc  # noqa: E402  (Debian: python3-grpcio)

from nexus.plugin.v1 import plugin_pb2, plugin_pb2_grpc  # noqa: E402
import grpc_controller_pb2  # noqa: E402
import grpc_controller_pb2_grpc  # noqa: E402

COOKIE_KEY = "NEXUS_PLUGIN_MAGIC_COOKIE"
COOKIE = "fd6454a49db5639e85fd5eb3301f88486473d5291c221ee3"


def log(level, message, **fields):
    """One hclog JSON line on stderr: nexus logs it at that level."""
    entry = {"@level": level, "@message": message}
    entry.update(fields)
    print(json.dumps(entry), file=sys.stderr, flush=True)


def tool(name, description, schema, read_only=True):
    return plugin_pb2.ToolSpec(
        name=name,
        description=description,
        input_schema=json.dumps(schema).encode(),
        annotations=plugin_pb2.ToolAnnotations(read_only=read_only, idempotent=read_only),
    )


class Plugin(plugin_pb2_grpc.PluginServiceServicer):
    def __init__(self):
        self.data_dir = ""
        self.lock = threading.Lock()

    def Info(self, request, context):
        text = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
        seconds = {"type": "object", "properties": {"seconds": {"type": "number"}}}
        return plugin_pb2.InfoResponse(
            name="pyecho",
            version="0.1.0",
            tools=[
                tool("echo", "Return the text given.", text),
                tool("count", "Count this tool's calls in this project.", {"type": "object"}, read_only=False),
                tool("slow", "Wait up to `seconds` (default 60), or until the call is cancelled.", seconds),
            ],
        )

    def Configure(self, request, context):
        self.data_dir = request.data_dir
        log("info", "configured", data_dir=request.data_dir, settings=dict(request.settings))
        return plugin_pb2.ConfigureResponse()

    def CallTool(self, request, context):
        args = json.loads(request.arguments or b"{}")
        if request.name == "echo":
            return plugin_pb2.CallToolResponse(text=args.get("text", ""))
        if request.name == "count":
            if not self.data_dir:
                return plugin_pb2.CallToolResponse(text="no data folder", is_error=True)
            path = os.path.join(self.data_dir, "count")
            with self.lock:
                n = int(open(path).read()) + 1 if os.path.exists(path) else 1
                tmp = path + ".tmp"
                with open(tmp, "w") as f:
                    f.write(str(n))
                os.replace(tmp, path)
            return plugin_pb2.CallToolResponse(text=str(n))
        if request.name == "slow":
            done = threading.Event()
            context.add_callback(done.set)  # runs when the call ends or is cancelled
            finished = done.wait(float(args.get("seconds", 60)))
            if finished and not context.is_active():
                # time_ns: the moment the cancellation arrived (for the tests).
                print(f"pyecho: slow cancelled at {time.time_ns()}", file=sys.stderr, flush=True)
                context.abort(grpc.StatusCode.CANCELLED, "cancelled by nexus")
            return plugin_pb2.CallToolResponse(text="waited")
        context.abort(grpc.StatusCode.UNIMPLEMENTED, f"no tool {request.name!r}")

    def HandleEvent(self, request, context):
        return plugin_pb2.HandleEventResponse()


class Controller(grpc_controller_pb2_grpc.GRPCControllerServicer):
    """go-plugin's controller: nexus calls Shutdown to stop the plugin."""

    def __init__(self, stop):
        self.stop = stop

    def Shutdown(self, request, context):
        self.stop.set()
        return grpc_controller_pb2.Empty()


def main():
    if os.environ.get(COOKIE_KEY) != COOKIE:
        print("This program is a nexus plugin: nexus starts it (see docs/plugins.md).", file=sys.stderr)
        sys.exit(1)
    if "2" not in os.environ.get("PLUGIN_PROTOCOL_VERSIONS", "").split(","):
        print("pyecho: nexus does not offer protocol version 2", file=sys.stderr)
        sys.exit(1)

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    plugin_pb2_grpc.add_PluginServiceServicer_to_server(Plugin(), server)
    stop = threading.Event()
    if os.environ.get("PYECHO_NO_CONTROLLER") != "1":  # the tests also run it without
        grpc_controller_pb2_grpc.add_GRPCControllerServicer_to_server(Controller(stop), server)

    # The TLS identity nexus issued for this start; nothing else may connect.
    cert = os.environ.pop("NEXUS_PLUGIN_TLS_CERT", "").encode()
    key = os.environ.pop("NEXUS_PLUGIN_TLS_KEY", "").encode()
    client = os.environ.get("PLUGIN_CLIENT_CERT", "").encode()
    sock = os.path.join(os.environ.get("PLUGIN_UNIX_SOCKET_DIR") or "/tmp", f"pyecho-{os.getpid()}.sock")
    if cert and key and client:
        creds = grpc.ssl_server_credentials([(key, cert)], root_certificates=client, require_client_auth=True)
        server.add_secure_port("unix:" + sock, creds)
    else:  # mutual TLS turned off (only for measurements)
        server.add_insecure_port("unix:" + sock)
    server.start()

    # The handshake: one line on stdout, then nothing else ever goes there.
    print(f"1|2|unix|{sock}|grpc|", flush=True)
    log("info", "serving", socket=sock)
    stop.wait()
    server.stop(grace=0.5).wait()


if __name__ == "__main__":
    main()
