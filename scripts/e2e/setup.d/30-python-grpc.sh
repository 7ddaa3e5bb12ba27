#!/usr/bin/env bash
# Python with grpcio for the example plugin in another language
# (examples/plugins/pyecho, TestE2EPythonPlugin): Debian's python3-grpcio and
# python3-protobuf for /usr/bin/python3, and protoc with gRPC's Python
# plugin (protobuf-compiler, protobuf-compiler-grpc) to generate the stubs
# from plugins/sdk/proto. PyPI is not used. Debian bookworm ships grpcio
# 1.51.1 and protobuf 3.21.12; protoc comes from the same protobuf release,
# so the generated stubs match the runtime.
set -euo pipefail
pkgs=(python3-grpcio python3-protobuf protobuf-compiler protobuf-compiler-grpc)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	SUDO=
	[ "$(id -u)" -eq 0 ] || SUDO=sudo
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
/usr/bin/python3 -c 'import grpc, google.protobuf; print("python grpcio", grpc.__version__, "protobuf", google.protobuf.__version__)'
protoc --version
command -v grpc_python_plugin >/dev/null
