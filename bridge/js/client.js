// client.js: the client side of the checkpointkit bridge protocol
// (bridge/PROTOCOL.md): starts a server process, multiplexes requests over
// its stdin/stdout, streams lists with credit, cancels, and reports a
// crashed server with the tail of its stderr.

import { spawn } from "node:child_process";
import { BridgeError, Codes } from "./codec.js";
import { messageLine, readMessages } from "./wire.js";

const PROTOCOL = "checkpointkit-bridge";
const VERSION = 1;

// Every live child, killed when this process exits however it exits.
const live = new Set();
let exitHookInstalled = false;
function installExitHook() {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", () => {
    for (const child of live) child.kill("SIGKILL");
  });
}

/** One server process speaking the bridge protocol. */
export class BridgeProcess {
  /**
   * start spawns command with args, sends hello and checks the protocol.
   * Options: env, cwd, name (for errors), stderrLines (kept for errors),
   * graceMs (how long close waits before killing), echoStderr (copy the
   * server's stderr to ours).
   */
  static async start({ command, args = [], env, cwd, name, stderrLines = 30, graceMs = 5000, echoStderr = false }) {
    if (!command) throw new Error("BridgeProcess.start: no command");
    const proc = new BridgeProcess({ command, args, env, cwd, name, stderrLines, graceMs, echoStderr });
    try {
      const hello = await proc.request("hello", { version: VERSION });
      if (hello?.protocol !== PROTOCOL || hello?.version !== VERSION) {
        throw new Error(`${proc.name} speaks ${JSON.stringify(hello?.protocol)} version ${hello?.version}, want ${PROTOCOL} ${VERSION}`);
      }
      proc.hello = hello;
      proc.capabilities = new Set(hello.capabilities ?? []);
    } catch (err) {
      await proc.close();
      throw err;
    }
    return proc;
  }

  constructor({ command, args, env, cwd, name, stderrLines, graceMs, echoStderr }) {
    this.name = name ?? [command, ...args].join(" ");
    this.graceMs = graceMs;
    this.nextId = 1;
    this.pending = new Map(); // id -> {resolve, reject, onItem, method}
    this.stderrTail = [];
    this.exited = null; // Error once the process is gone
    this.hello = null;
    this.capabilities = new Set();

    installExitHook();
    const child = spawn(command, args, { env: env ?? process.env, cwd, stdio: ["pipe", "pipe", "pipe"] });
    this.child = child;
    live.add(child);
    this.exitPromise = new Promise((resolve) => {
      child.once("error", (err) => {
        // The process could not be spawned (no "exit" follows).
        live.delete(child);
        this.fail(new Error(`${this.name}: cannot start: ${err.message}`));
        resolve();
      });
      child.once("exit", (code, signal) => {
        live.delete(child);
        // stderr may still hold its last lines: wait for it to end.
        const report = () => {
          const how = signal ? `was killed by ${signal}` : `exited with status ${code}`;
          this.fail(new Error(`${this.name} (pid ${child.pid}) ${how}${this.tail()}`));
          resolve();
        };
        if (child.stderr.readableEnded) report();
        else child.stderr.once("close", report);
      });
    });
    child.stdin.on("error", () => {}); // EPIPE: the exit handler reports it
    readMessages(child.stdout, {
      onMessage: (msg) => this.onMessage(msg),
      onBadLine: (line) => this.noteStderr(`[stdout, not a message] ${line.slice(0, 200)}`),
    });
    let partial = "";
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk) => {
      if (echoStderr) process.stderr.write(chunk);
      const lines = (partial + chunk).split("\n");
      partial = lines.pop();
      for (const l of lines) this.noteStderr(l);
    });
    child.stderr.on("end", () => {
      if (partial) this.noteStderr(partial);
    });
    this.stderrLines = stderrLines;
  }

  noteStderr(line) {
    this.stderrTail.push(line);
    if (this.stderrTail.length > this.stderrLines) this.stderrTail.shift();
  }

  tail() {
    return this.stderrTail.length ? `; its stderr ends with:\n${this.stderrTail.join("\n")}` : " (no stderr)";
  }

  fail(err) {
    if (this.exited) return;
    this.exited = err;
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }

  onMessage(msg) {
    const p = this.pending.get(msg.id);
    if (!p) return; // a late reply to a request we gave up on
    if ("item" in msg) {
      p.onItem?.(msg.item);
      return;
    }
    this.pending.delete(msg.id);
    if (msg.error) {
      const { code, message } = msg.error;
      p.reject(new BridgeError(code ?? Codes.INTERNAL, `${this.name}: ${p.method}: ${message}`));
    } else {
      p.resolve(msg.result ?? null);
    }
  }

  send(msg) {
    if (this.exited) throw this.exited;
    this.child.stdin.write(messageLine(msg));
  }

  /**
   * request sends method with params and resolves with its result. Options:
   * saver (the saver id), signal (an AbortSignal: aborting sends cancel and
   * rejects at once), timeoutMs (sent as timeout_ms), onItem (list items).
   */
  request(method, params, options) {
    return this.call(method, params, options).result;
  }

  // call is request that also gives the request's id.
  call(method, params, { saver, signal, timeoutMs, onItem } = {}) {
    if (this.exited) return { id: 0, result: Promise.reject(this.exited) };
    if (signal?.aborted) return { id: 0, result: Promise.reject(abortError(signal, method)) };
    const id = this.nextId++;
    const result = new Promise((resolve, reject) => {
      let onAbort;
      const done = (f) => (v) => {
        if (onAbort) signal.removeEventListener("abort", onAbort);
        f(v);
      };
      this.pending.set(id, { resolve: done(resolve), reject: done(reject), onItem, method });
      if (signal) {
        onAbort = () => {
          if (!this.pending.has(id)) return;
          this.pending.delete(id);
          this.cancel(id);
          reject(abortError(signal, method));
        };
        signal.addEventListener("abort", onAbort, { once: true });
      }
      const msg = { id, method, params };
      if (saver !== undefined && saver !== null) msg.saver = saver;
      if (timeoutMs !== undefined) msg.timeout_ms = Math.max(0, Math.floor(timeoutMs));
      try {
        this.send(msg);
      } catch (err) {
        this.pending.delete(id);
        done(reject)(err);
      }
    });
    return { id, result };
  }

  cancel(id) {
    try {
      this.send({ id, cancel: true });
    } catch {
      // gone already
    }
  }

  /**
   * stream runs a list-like request and yields its items, asking for more
   * with credit as they are consumed. Returning early cancels the request.
   */
  async *stream(method, params, { saver, signal, timeoutMs, credit = 64 } = {}) {
    const queue = [];
    let wake = null;
    let finished = false;
    let failure = null;
    const notify = () => {
      wake?.();
      wake = null;
    };
    const { id, result } = this.call(method, { ...params, credit }, {
      saver,
      signal,
      timeoutMs,
      onItem: (item) => {
        queue.push(item);
        notify();
      },
    });
    result.then(
      () => {
        finished = true;
        notify();
      },
      (err) => {
        finished = true;
        failure = err;
        notify();
      },
    );
    let consumed = 0;
    try {
      for (;;) {
        if (queue.length > 0) {
          yield queue.shift();
          consumed += 1;
          if (consumed >= credit / 2 && !finished && this.pending.has(id)) {
            try {
              this.send({ id, credit: consumed });
            } catch {
              // the exit handler fails the request
            }
            consumed = 0;
          }
          continue;
        }
        if (finished) {
          if (failure) throw failure;
          return;
        }
        await new Promise((resolve) => (wake = resolve));
      }
    } finally {
      if (!finished && this.pending.has(id)) {
        // Stopped early: the server closes the saver's iterator.
        this.pending.delete(id);
        this.cancel(id);
      }
    }
  }

  /**
   * close ends the session by closing the server's stdin, waits for it to
   * exit (graceMs at most) and then kills it.
   */
  async close() {
    const child = this.child;
    if (child.exitCode === null && child.signalCode === null) {
      child.stdin.end();
      let timer;
      const timeout = new Promise((resolve) => (timer = setTimeout(resolve, this.graceMs)));
      await Promise.race([this.exitPromise, timeout]);
      clearTimeout(timer);
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGKILL");
        await this.exitPromise;
      }
    }
    await this.exitPromise;
    this.fail(new Error(`${this.name}: closed`));
  }
}

function abortError(signal, method) {
  const reason = signal.reason;
  if (reason instanceof Error) return reason;
  return new BridgeError(Codes.CANCELED, `${method}: aborted${reason === undefined ? "" : `: ${reason}`}`);
}
