// RecordingSaver wraps any LangGraph.js BaseCheckpointSaver and logs every
// call in the JSON shape of checkpointkit's refengine/trace format
// ({"calls": [...]}, see `go doc ./refengine/trace`), so that the saver
// traffic of LangGraph.js and of refengine on the same graph can be
// compared after canonicalization (trace.Canonical on the Go side).
//
// Differences from a Go trace that canonicalization absorbs: channel
// versions are LangGraph.js's integers, recorded as decimal strings; task
// IDs are LangGraph.js's own; error messages are the JS saver's. Sends are
// recorded as refengine stores them, {"node", "arg"}.
//
// It imports BaseCheckpointSaver from @langchain/langgraph, i.e. the
// checkpoint package LangGraph.js itself uses.
import { BaseCheckpointSaver } from "@langchain/langgraph";

// plain turns a value into its JSON form (undefined fields dropped, typed
// arrays as plain arrays, a Send as refengine's {"node", "arg"} map), so the
// log holds snapshots, not live objects. A Send read back through a
// saver's serde is a plain {node, args} object; it is recorded the same.
function plain(v) {
  if (v === undefined) return undefined;
  return JSON.parse(
    JSON.stringify(v, (_k, x) => {
      if (ArrayBuffer.isView(x)) return Array.from(x);
      if (x?.lg_name === "Send" || isReadBackSend(x)) return { node: x.node, arg: x.args };
      return x;
    }),
  );
}

// isReadBackSend reports a Send as the JSON serde returns it: an object
// with exactly the keys node (a string) and args.
function isReadBackSend(x) {
  if (x === null || typeof x !== "object" || Array.isArray(x)) return false;
  const keys = Object.keys(x);
  return keys.length === 2 && typeof x.node === "string" && "args" in x;
}

function config(c) {
  const conf = c?.configurable ?? {};
  const out = { thread_id: conf.thread_id ?? "", checkpoint_ns: conf.checkpoint_ns ?? "" };
  if (conf.checkpoint_id) out.checkpoint_id = conf.checkpoint_id;
  return out;
}

function versions(vs) {
  if (vs == null) return undefined;
  return Object.fromEntries(Object.entries(vs).map(([k, v]) => [k, String(v)]));
}

function checkpoint(cp) {
  const seen = {};
  for (const [node, vs] of Object.entries(cp.versions_seen ?? {})) seen[node] = versions(vs);
  return {
    v: cp.v,
    id: cp.id,
    ts: cp.ts,
    channel_values: plain(cp.channel_values ?? {}),
    channel_versions: versions(cp.channel_versions ?? {}),
    versions_seen: seen,
    updated_channels: cp.updated_channels ?? null,
  };
}

function write(w) {
  return { task_id: w[0], channel: w[1], value: plain(w[2]) ?? null };
}

function tuple(t) {
  const out = {
    config: config(t.config),
    checkpoint: checkpoint(t.checkpoint),
    metadata: plain(t.metadata ?? {}),
    pending_writes: (t.pendingWrites ?? []).map(write),
  };
  if (t.parentConfig) out.parent = config(t.parentConfig);
  return out;
}

function listOptions(c, options = {}) {
  const conf = c?.configurable ?? {};
  const out = { namespace: conf.checkpoint_ns ?? "" };
  if (conf.thread_id) out.thread_id = conf.thread_id;
  if (conf.checkpoint_ns === undefined) out.all_namespaces = true;
  if (conf.checkpoint_id) out.checkpoint_id = conf.checkpoint_id;
  if (options.filter) out.filter = plain(options.filter);
  if (options.before) out.before = options.before.configurable?.checkpoint_id;
  if (options.limit) out.limit = options.limit;
  return out;
}

/** A BaseCheckpointSaver that forwards to another and records each call. */
export class RecordingSaver extends BaseCheckpointSaver {
  constructor(inner) {
    super(inner.serde);
    this.inner = inner;
    this.calls = [];
  }

  getNextVersion(current) {
    return this.inner.getNextVersion(current);
  }

  #fail(call, err) {
    call.error = String(err?.message ?? err);
    this.calls.push(call);
    throw err;
  }

  async getTuple(c) {
    const call = { method: "GetTuple", config: config(c) };
    let t;
    try {
      t = await this.inner.getTuple(c);
    } catch (err) {
      this.#fail(call, err);
    }
    if (t) call.tuple = tuple(t);
    else call.not_found = true;
    this.calls.push(call);
    return t;
  }

  async *list(c, options) {
    const call = { method: "List", list: listOptions(c, options), tuples: [] };
    let done = false;
    try {
      for await (const t of this.inner.list(c, options)) {
        call.tuples.push(tuple(t));
        yield t;
      }
      done = true;
    } catch (err) {
      this.#fail(call, err);
    } finally {
      if (!call.error) {
        if (!done) call.stopped = true;
        if (call.tuples.length === 0) delete call.tuples;
        this.calls.push(call);
      }
    }
  }

  async put(c, cp, metadata, newVersions) {
    const call = {
      method: "Put",
      config: config(c),
      checkpoint: checkpoint(cp),
      metadata: plain(metadata),
      new_versions: versions(newVersions),
    };
    let out;
    try {
      out = await this.inner.put(c, cp, metadata, newVersions);
    } catch (err) {
      this.#fail(call, err);
    }
    call.result = config(out);
    this.calls.push(call);
    return out;
  }

  async putWrites(c, writes, taskId, taskPath) {
    const call = {
      method: "PutWrites",
      config: config(c),
      writes: writes.map((w) => ({ channel: w[0], value: plain(w[1]) ?? null })),
      task_id: taskId,
      task_path: taskPath ?? "",
    };
    try {
      await this.inner.putWrites(c, writes, taskId, taskPath);
    } catch (err) {
      this.#fail(call, err);
    }
    this.calls.push(call);
  }

  async deleteThread(threadId) {
    const call = { method: "DeleteThread", thread_id: threadId };
    try {
      await this.inner.deleteThread(threadId);
    } catch (err) {
      this.#fail(call, err);
    }
    this.calls.push(call);
  }

  /** The recorded trace, as refengine/trace's JSON document. */
  trace() {
    return { calls: this.calls };
  }
}
