// Package lgjs judges LangGraph.js's own checkpoint savers by checkpointkit's
// conformance suite. Its test starts one `node bridge/js/server.js --saver
// KIND` process, which serves LangGraph.js's MemorySaver, SqliteSaver,
// PostgresSaver or MongoDBSaver over the bridge protocol (see package
// bridge), and opens a fresh saver on it for every spec:
//
//	CHECKPOINTKIT_LGJS_SAVER=sqlite go test ./bridge/lgjs/
//
// CHECKPOINTKIT_LGJS_SAVER is memory (the default), sqlite, postgres (with
// CHECKPOINTKIT_POSTGRES_DSN) or mongo (with CHECKPOINTKIT_MONGO_URI); the
// LangGraph.js packages must be installed with `npm ci` in bridge/js.
//
// These savers are third-party code. Their failed specs are findings about
// them, not bugs of checkpointkit: the run is expected to fail specs, and
// what matters is that it completes and writes its capability report (which
// ci/cmd/matrix shows as the lgjs-* columns). The server only translates;
// it does not correct the savers.
package lgjs
