// saver.js: BridgeSaver, a LangGraph.js checkpoint saver that forwards every
// call to a saver served over the checkpointkit bridge protocol, normally
// one of checkpointkit's Go adapters served by cmd/checkpointkit-saver.
//
//   const proc = await startSaverProcess({ adapter: "sqlite" });
//   const saver = await BridgeSaver.open(proc);   // fresh, isolated storage
//   ... use saver like any BaseCheckpointSaver ...
//   await saver.close();
//   await proc.close();
//
// or, one process per saver: `const saver = await BridgeSaver.start({ adapter: "memory" })`.
//
// Values travel through the bridge's typed encoding (see codec.js), so
// numbers, strings, booleans, null, arrays, plain objects and Uint8Arrays
// come back as they were given; numeric channel versions stay numbers.
// getNextVersion is LangGraph.js's default (1, 2, 3, ...).

import { BaseCheckpointSaver, TASKS, maxChannelVersion } from "@langchain/langgraph-checkpoint";
import { BridgeProcess } from "./client.js";
import {
  BridgeError,
  Codes,
  checkpointToWire,
  configToWire,
  encodeMap,
  encodeWrites,
  historiesFromWire,
  idToWire,
  tupleFromWire,
  versionsToWire,
} from "./codec.js";

/**
 * startSaverProcess starts the checkpointkit saver server for a Go adapter:
 * `<bin> -adapter <adapter>`, where bin is the option or
 * CHECKPOINTKIT_SAVER_BIN (a built cmd/checkpointkit-saver).
 */
export async function startSaverProcess({ adapter = "memory", bin = process.env.CHECKPOINTKIT_SAVER_BIN, args, env, ...rest } = {}) {
  if (!bin) {
    throw new Error("startSaverProcess: no saver binary: pass `bin` or set CHECKPOINTKIT_SAVER_BIN to a built cmd/checkpointkit-saver");
  }
  return BridgeProcess.start({
    command: bin,
    args: args ?? ["-adapter", adapter],
    env,
    name: `checkpointkit-saver -adapter ${adapter}`,
    ...rest,
  });
}

function signalOf(config) {
  return config?.signal instanceof AbortSignal ? config.signal : undefined;
}

/** A BaseCheckpointSaver backed by a saver across the bridge. */
export class BridgeSaver extends BaseCheckpointSaver {
  /**
   * open asks proc for a fresh saver (the server's `open`); a server without
   * `open` hosts exactly one saver, which is then used.
   */
  static async open(proc, { serde } = {}) {
    let id = null;
    if (proc.capabilities.has("open")) ({ saver: id } = await proc.request("open", {}));
    return new BridgeSaver(proc, id, { serde });
  }

  /** start starts a saver process of its own (see startSaverProcess) and opens a saver on it; close() stops both. */
  static async start(options = {}) {
    const proc = await startSaverProcess(options);
    try {
      const saver = await BridgeSaver.open(proc, options);
      saver.ownsProcess = true;
      return saver;
    } catch (err) {
      await proc.close();
      throw err;
    }
  }

  constructor(proc, saverId, { serde } = {}) {
    super(serde);
    this.proc = proc;
    this.saverId = saverId;
    this.ownsProcess = false;
  }

  call(method, params, config) {
    return this.proc.request(method, params, { saver: this.saverId, signal: signalOf(config) });
  }

  /**
   * getTuple returns undefined for a config that names no thread, as
   * LangGraph.js's savers do (checkpointkit's contract calls that an invalid
   * config; the JS API calls it "no checkpoint").
   */
  async getTuple(config) {
    const threadId = config?.configurable?.thread_id;
    if (threadId === undefined || threadId === null) return undefined;
    const t = await this.fetchTuple(config);
    return t === undefined ? undefined : this.migratePendingSends(t, config);
  }

  async fetchTuple(config) {
    try {
      const t = await this.call("get_tuple", { config: configToWire(config) }, config);
      return t === null ? undefined : tupleFromWire(t);
    } catch (err) {
      if (err instanceof BridgeError && err.code === Codes.NOT_FOUND) return undefined;
      throw err;
    }
  }

  /**
   * migratePendingSends upgrades a checkpoint of format v < 4 on read, as
   * every LangGraph.js saver does: before v4, Send packets lived in the
   * checkpoint; since v4 they are the parent's writes to the __pregel_tasks
   * channel. The Go adapters return checkpoints exactly as they were put, so
   * the LangGraph.js face of them does this step itself.
   */
  async migratePendingSends(tuple, config) {
    const cp = tuple.checkpoint;
    if (!(cp.v < 4) || tuple.parentConfig === undefined) return tuple;
    const parent = await this.fetchTuple({ ...tuple.parentConfig, signal: config?.signal });
    const sends = (parent?.pendingWrites ?? []).filter(([, channel]) => channel === TASKS).map(([, , value]) => value);
    cp.channel_values = { ...(cp.channel_values ?? {}), [TASKS]: sends };
    const versions = Object.values(cp.channel_versions ?? {});
    cp.channel_versions = {
      ...(cp.channel_versions ?? {}),
      [TASKS]: versions.length > 0 ? maxChannelVersion(...versions) : this.getNextVersion(undefined),
    };
    return tuple;
  }

  /**
   * list maps LangGraph.js's list onto the bridge's: no thread_id lists
   * every thread, no checkpoint_ns every namespace; a limit of 0 yields
   * nothing (as MemorySaver and PostgresSaver do). Stopping early cancels
   * the request on the server.
   */
  async *list(config, options = {}) {
    const { limit, before, filter } = options;
    if (limit === 0) return;
    const c = config?.configurable ?? {};
    const wire = configToWire(config);
    const params = {
      thread_id: wire.thread_id,
      checkpoint_ns: wire.checkpoint_ns,
      all_namespaces: c.checkpoint_ns === undefined || c.checkpoint_ns === null,
      checkpoint_id: wire.checkpoint_id,
      filter: encodeMap(filter, "filter"),
      before: before ? configToWire(before).checkpoint_id : "",
      limit: limit ?? 0,
    };
    for await (const item of this.proc.stream("list", params, { saver: this.saverId, signal: signalOf(config) })) {
      yield await this.migratePendingSends(tupleFromWire(item), config);
    }
  }

  async put(config, checkpoint, metadata, newVersions) {
    const params = {
      config: configToWire(config),
      checkpoint: checkpointToWire(checkpoint),
      metadata: encodeMap(metadata, "metadata"),
      new_versions: versionsToWire(newVersions, "new_versions"),
    };
    const { config: out } = await this.call("put", params, config);
    return { configurable: { thread_id: out.thread_id, checkpoint_ns: out.checkpoint_ns, checkpoint_id: out.checkpoint_id } };
  }

  /**
   * putWrites stores writes ([channel, value] pairs) of taskId. LangGraph.js's
   * runtime passes a task path as a fourth argument; it is forwarded.
   */
  async putWrites(config, writes, taskId, taskPath = "") {
    const params = {
      config: configToWire(config),
      writes: encodeWrites(writes),
      task_id: idToWire(taskId, "task_id"),
      task_path: idToWire(taskPath, "task_path"),
    };
    await this.call("put_writes", params, config);
  }

  /**
   * getDeltaChannelHistory returns the delta history of channels as seen
   * from config's checkpoint in one delta_history request. Against a server
   * without that capability it is LangGraph.js's default walk over getTuple.
   */
  async getDeltaChannelHistory(options) {
    const { config, channels } = options;
    if (channels.length === 0) return {};
    const threadId = config?.configurable?.thread_id;
    if (threadId === undefined || threadId === null) return Object.fromEntries(channels.map((ch) => [ch, { writes: [] }]));
    if (!this.proc.capabilities.has("delta_history")) return super.getDeltaChannelHistory(options);
    const params = { channels: channels.map((ch) => idToWire(ch, "channel")), config: configToWire(config) };
    return historiesFromWire(await this.call("delta_history", params, config));
  }

  async deleteThread(threadId) {
    await this.call("delete_thread", { thread_id: idToWire(threadId, "thread_id") });
  }

  /** close releases the saver's storage on the server (and the server, when this saver started it). */
  async close() {
    try {
      if (this.saverId !== null && !this.proc.exited) await this.call("close", {});
    } finally {
      if (this.ownsProcess) await this.proc.close();
    }
  }
}
