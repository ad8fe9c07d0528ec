// Package lgpy judges LangGraph Python's checkpoint savers, or any Python
// BaseCheckpointSaver, by checkpointkit's conformance suite. Its test starts
// one `python -m checkpointkit_bridge serve FACTORY` process (see
// bridge/python), which serves the savers a factory gives over the bridge
// protocol (see package bridge), and opens a fresh saver on it for every
// spec:
//
//	CHECKPOINTKIT_LGPY_SAVER=sqlite go test ./bridge/lgpy/
//	CHECKPOINTKIT_LGPY_FACTORY=mypkg.savers:make go test ./bridge/lgpy/
//
// CHECKPOINTKIT_LGPY_SAVER is memory (the default, InMemorySaver), sqlite
// (SqliteSaver), postgres (PostgresSaver, with CHECKPOINTKIT_POSTGRES_DSN)
// or mongo (MongoDBSaver, with CHECKPOINTKIT_MONGO_URI).
// CHECKPOINTKIT_LGPY_FACTORY names another factory as module:function (its
// module importable by the interpreter, PYTHONPATH included) and takes
// precedence; `python -m checkpointkit_bridge check module:function` runs
// this test for it without Go code (see bridge/python/README.md). CHECKPOINTKIT_PYTHON is the interpreter, by default
// bridge/python/.venv/bin/python (created by ci/lib/backends.bash's
// ck_install_lgpy).
//
// These savers are third-party code. Their failed specs are findings about
// them, not bugs of checkpointkit: the run is expected to fail specs, and
// what matters is that it completes and writes its capability report (which
// ci/cmd/matrix shows as the lgpy-* columns). The server only translates;
// it does not correct the savers.
package lgpy
