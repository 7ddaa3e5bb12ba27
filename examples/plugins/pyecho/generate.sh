#!/bin/sh
# Generate the gRPC stubs pyecho imports into gen/ from the protocol's
# definitions in plugins/sdk/proto, with Debian's protoc and gRPC's Python
# plugin (apt-get install protobuf-compiler protobuf-compiler-grpc
# python3-grpcio python3-protobuf). PROTO_DIR overrides where the
# definitions are (default: this repository's).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
proto=${PROTO_DIR:-$here/../../../plugins/sdk/proto}
rm -rf "$here/gen"
mkdir -p "$here/gen"
protoc -I "$proto" -I "$proto/goplugin" \
	--python_out="$here/gen" --grpc_out="$here/gen" \
	--plugin=protoc-gen-grpc="$(command -v grpc_python_plugin)" \
	nexus/plugin/v1/plugin.proto grpc_controller.proto
