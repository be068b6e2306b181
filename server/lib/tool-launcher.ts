/**
 * One small long-lived process that starts the service's tools (issue 34). fork() of the service itself
 * (hundreds of MB of heap, many mappings) held its event loop 40–330 ms per tool under load, from the main
 * thread and from a worker thread alike (they share the address space fork() copies), and listings fell to
 * a twentieth while PDFs were extracted. The launcher's forks copy its own few MB and stop none of the
 * service's threads; the service only writes a request line and reads framed replies.
 *
 * Protocol: requests are JSON lines on the launcher's stdin (`run`, `kill`); replies are frames on its
 * stdout: u32 length of what follows, u8 type, u32 call id, body (STARTED: the tool's pid as JSON; STDOUT:
 * raw bytes; EXIT: the outcome as JSON). Bounds: the launcher keeps at most `maxStdout` bytes of a tool's
 * output (the tool's group is killed there) and a tail of its stderr, and stops reading the tools while the
 * pipe to the service is full, so neither process buffers more than one call's cap.
 *
 * Lifetime: started on the first call; its tools run at background priority. It exits when the service
 * does, however it ends (its stdin reaches EOF; it also watches its parent pid), killing its tools' groups.
 * If it dies, the calls in flight are retried once on a new launcher, then fail with a clear error; their
 * tools' groups are killed from here.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { BACKGROUND_NICE, countBackgroundPid } from './proc-cpu';

export interface LaunchRequest {
  bin: string;
  args: string[];
  cwd?: string;
  /** Without it, the launcher's (the service's when it started): serialising process.env per call showed in profiles. */
  env?: NodeJS.ProcessEnv;
  /** Stdout kept at most (0: ignored); the tool's group is killed past it. */
  maxStdout: number;
  /** The launcher kills the tool's group after this long, whatever the service's own loop is doing. */
  timeoutMs?: number;
}

export interface LaunchResult {
  code: number | null;
  signal: string | null;
  stdout: Buffer;
  stderr: string;
  capped: boolean;
  timedOut: boolean;
  /** The tool could not be started (ENOENT and the like). */
  error?: { message: string; code?: string };
}

const STARTED = 1;
const STDOUT = 2;
const EXIT = 3;
const HEADER = 9;
/** Characters of a tool's stderr kept (its tail). */
export const STDERR_TAIL = 2000;

/**
 * The launcher's program. It runs in its own process (`node -e`, its source is this function's), so its
 * body uses nothing from outside it: built-in modules come from process.getBuiltinModule.
 */
function launcherMain(o: { stderrTail: number; nice: number; STARTED: number; STDOUT: number; EXIT: number }): void {
  const { STARTED, STDOUT, EXIT } = o;
  const { spawn } = process.getBuiltinModule('node:child_process');
  const net = process.getBuiltinModule('node:net');
  const { setPriority } = process.getBuiltinModule('node:os');
  const parent = process.ppid;
  // Not process.stdout: on Linux its pipe writes block, and a full pipe would stall every tool and kill request.
  const out = new net.Socket({ fd: 1, readable: false });
  const running = new Map<number, import('node:child_process').ChildProcess>();
  let blocked = false;
  const send = (type: number, id: number, body: Buffer) => {
    const head = Buffer.allocUnsafe(9);
    head.writeUInt32BE(5 + body.length, 0);
    head.writeUInt8(type, 4);
    head.writeUInt32BE(id, 5);
    if (out.write(Buffer.concat([head, body])) || blocked) return;
    blocked = true;
    for (const c of running.values()) c.stdout?.pause();
    out.once('drain', () => {
      blocked = false;
      for (const c of running.values()) c.stdout?.resume();
    });
  };
  const killGroup = (c: import('node:child_process').ChildProcess) => {
    try {
      if (c.pid) process.kill(-c.pid, 'SIGKILL');
    } catch {
      // The group is gone already: nothing left of the tool.
    }
  };
  const run = (id: number, r: { bin: string; args: string[]; cwd?: string; env?: NodeJS.ProcessEnv; maxStdout: number; timeoutMs?: number }) => {
    let stderr = '';
    let kept = 0;
    let capped = false;
    let timedOut = false;
    let failed: { message: string; code?: string } | undefined;
    let done = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const finish = (code: number | null, signal: string | null) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      running.delete(id);
      send(EXIT, id, Buffer.from(JSON.stringify({ code, signal, stderr: stderr.trim(), capped, timedOut, error: failed })));
    };
    let c: import('node:child_process').ChildProcess;
    try {
      // Its own process group, so a kill reaches what the tool started (soffice's office process keeps stderr open).
      c = spawn(r.bin, r.args, { cwd: r.cwd, env: r.env, stdio: ['ignore', r.maxStdout > 0 ? 'pipe' : 'ignore', 'pipe'], detached: true });
    } catch (e) {
      failed = { message: (e as Error).message, code: (e as NodeJS.ErrnoException).code };
      return finish(null, null);
    }
    if (r.timeoutMs) timer = setTimeout(() => ((timedOut = true), killGroup(c)), r.timeoutMs);
    if (c.pid) {
      running.set(id, c);
      send(STARTED, id, Buffer.from(JSON.stringify({ pid: c.pid })));
      try {
        setPriority(c.pid, o.nice);
      } catch {
        // Gone already (its exit comes next) or refused: it runs at the launcher's priority.
      }
      if (blocked) c.stdout?.pause();
    }
    c.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-o.stderrTail)));
    c.stdout?.on('data', (d: Buffer) => {
      if (capped) return;
      const room = r.maxStdout - kept;
      if (d.length >= room) {
        capped = true;
        killGroup(c);
      }
      const part = d.length > room ? d.subarray(0, room) : d;
      kept += part.length;
      if (part.length) send(STDOUT, id, part);
    });
    c.once('error', (e: NodeJS.ErrnoException) => {
      failed = { message: e.message, code: e.code };
      if (!c.pid) finish(null, null);
    });
    // What the tool left behind in its group goes with it.
    c.once('exit', () => killGroup(c));
    c.once('close', (code, signal) => finish(code, signal));
  };
  const shutdown = () => {
    for (const c of running.values()) killGroup(c);
    process.exit(0);
  };
  let line = '';
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (d: string) => {
    const lines = (line + d).split('\n');
    line = lines.pop()!;
    for (const l of lines) {
      const m = JSON.parse(l);
      if (m.op === 'run') run(m.id, m);
      else {
        const c = running.get(m.id);
        if (c) killGroup(c);
      }
    }
  });
  process.stdin.on('end', shutdown);
  out.on('error', shutdown);
  // A service killed with SIGKILL closes the pipe too; this catches a pipe some other process kept open.
  setInterval(() => process.ppid !== parent && shutdown(), 1000).unref();
}

interface Call {
  id: number;
  req: LaunchRequest;
  signal: AbortSignal;
  retried: boolean;
  pid?: number;
  uncount?: () => void;
  out: Buffer<ArrayBuffer>[];
  resolve: (r: LaunchResult) => void;
  reject: (e: Error) => void;
}

/** The service's end: starts the launcher when first needed, again after it died. */
export class ToolLauncher {
  private child: ChildProcess | null = null;
  private readonly calls = new Map<number, Call>();
  private lastId = 0;
  private pending: Buffer = Buffer.alloc(0);

  /** The launcher's pid while one runs. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** The pids of the tools it reported started and not yet ended. */
  get tools(): number[] {
    return [...this.calls.values()].flatMap((c) => (c.pid ? [c.pid] : []));
  }

  /** Runs `req` in the launcher; resolves with the outcome (a non-zero exit too). An abort kills the tool's group. */
  launch(req: LaunchRequest, signal: AbortSignal): Promise<LaunchResult> {
    return new Promise((resolve, reject) => {
      const call: Call = { id: ++this.lastId, req, signal, retried: false, out: [], resolve, reject };
      const kill = () => this.calls.has(call.id) && this.write({ op: 'kill', id: call.id });
      signal.addEventListener('abort', kill, { once: true });
      const settle = () => signal.removeEventListener('abort', kill);
      call.resolve = (r) => (settle(), resolve(r));
      call.reject = (e) => (settle(), reject(e));
      this.send(call);
    });
  }

  private send(call: Call): void {
    this.calls.set(call.id, call);
    if (this.calls.size === 1) this.hold(true);
    this.write({ op: 'run', id: call.id, ...call.req });
  }

  private write(m: object): void {
    this.start().stdin!.write(`${JSON.stringify(m)}\n`);
  }

  private start(): ChildProcess {
    if (this.child) return this.child;
    // `var __name`: tsx's transform may name inner functions through a helper the launcher's source lacks.
    const source = `var __name = (f) => f; (${launcherMain.toString()})(${JSON.stringify({ stderrTail: STDERR_TAIL, nice: BACKGROUND_NICE, STARTED, STDOUT, EXIT })});`;
    // No tsx or other preloads; in the desktop app execPath is Electron's, which runs as plain Node with this.
    const env = { ...process.env, NODE_OPTIONS: '', ELECTRON_RUN_AS_NODE: '1' };
    // At normal priority, unlike its tools: a launcher waiting for a core would hold every start (and kill).
    const child = spawn(process.execPath, ['--max-old-space-size=32', '-e', source], { stdio: ['pipe', 'pipe', 'inherit'], env });
    if (child.pid) child.once('exit', countBackgroundPid(child.pid));
    this.child = child;
    this.pending = Buffer.alloc(0);
    child.stdin!.on('error', () => undefined); // a dead launcher is reported by its exit
    child.stdout!.on('data', (d: Buffer) => this.read(d));
    // 'close', not 'exit': the frames it wrote before dying are read first, so every started tool's pid is known.
    child.once('close', (code, sig) => this.died(child, code ?? sig));
    if (this.calls.size === 0) this.hold(false);
    return child;
  }

  /** Keeps the service's event loop alive while calls are in flight, not while the launcher idles. */
  private hold(on: boolean): void {
    const c = this.child;
    if (!c) return;
    for (const h of [c, c.stdin, c.stdout] as Array<{ ref?(): void; unref?(): void } | null>) on ? h?.ref?.() : h?.unref?.();
  }

  private read(chunk: Buffer): void {
    let buf = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    while (buf.length >= HEADER && buf.length >= 4 + buf.readUInt32BE(0)) {
      const end = 4 + buf.readUInt32BE(0);
      this.frame(buf[4], buf.readUInt32BE(5), buf.subarray(HEADER, end));
      buf = buf.subarray(end);
    }
    this.pending = buf;
  }

  private frame(type: number, id: number, body: Buffer): void {
    const call = this.calls.get(id);
    if (!call) return;
    if (type === STDOUT) call.out.push(body as Buffer<ArrayBuffer>);
    else if (type === STARTED) {
      call.pid = JSON.parse(body.toString()).pid as number;
      call.uncount = countBackgroundPid(call.pid);
    } else if (type === EXIT) {
      this.done(call);
      call.resolve({ ...JSON.parse(body.toString()), stdout: Buffer.concat(call.out) });
    }
  }

  private done(call: Call): void {
    call.uncount?.();
    this.calls.delete(call.id);
    if (this.calls.size === 0) this.hold(false);
  }

  /** The launcher is gone: its tools' groups are killed from here, its calls retried once on a new one. */
  private died(child: ChildProcess, how: number | string | null): void {
    if (this.child === child) this.child = null;
    const calls = [...this.calls.values()];
    for (const call of calls) {
      try {
        if (call.pid) process.kill(-call.pid, 'SIGKILL');
      } catch {
        // The tool ended with its launcher.
      }
      this.done(call);
    }
    for (const call of calls) {
      if (call.signal.aborted) call.reject(call.signal.reason ?? new Error('cancelled'));
      else if (call.retried) call.reject(new Error(`the tool launcher exited (${how}) while ${call.req.bin} ran, twice`));
      else this.send({ ...call, retried: true, pid: undefined, uncount: undefined, out: [] });
    }
  }
}

/** The service's one launcher. */
export const toolLauncher = new ToolLauncher();
