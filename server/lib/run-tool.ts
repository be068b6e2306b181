/**
 * Runs a heavy tool (ffmpeg, pdftoppm, soffice, pdftotext) as its own process
 * at low CPU priority, so a thumbnail or text extraction never competes with
 * requests for the event loop or at full priority for the cores. The tools are
 * started by the launcher process (tool-launcher.ts), not forked from the
 * service: a fork of the service held its event loop for tens of milliseconds.
 */
import { AppError } from '../errors';
import { toolLauncher } from './tool-launcher';

export interface ToolOptions {
  signal: AbortSignal;
  cwd?: string;
  /** The tool's whole environment; without it, the service's as it was when the launcher started. */
  env?: NodeJS.ProcessEnv;
  /** A time limit the launcher enforces itself (the tool's whole group is killed): a backstop to the signal. */
  timeoutMs?: number;
}

/**
 * Resolves when `bin` exits 0; otherwise rejects with an Error carrying the
 * exit status and the tail of stderr. The signal kills the process.
 */
export async function runTool(bin: string, args: string[], o: ToolOptions): Promise<void> {
  await run(bin, args, o, 0);
}

/**
 * As `runTool`, keeping what the tool writes to stdout, at most `maxBytes`:
 * a tool that writes more is killed there and its output so far comes back
 * with `capped` (whatever its exit status would have been). `stderr`: its
 * tail, for tools that exit 0 after a complaint.
 */
export function runToolOutput(bin: string, args: string[], o: ToolOptions & { maxBytes: number }): Promise<ToolOutput> {
  return run(bin, args, o, o.maxBytes);
}

interface ToolOutput {
  stdout: Buffer;
  capped: boolean;
  stderr: string;
}

async function run(bin: string, args: string[], o: ToolOptions, maxStdout: number): Promise<ToolOutput> {
  if (o.signal.aborted) throw o.signal.reason ?? new AppError('cancelled');
  const r = await toolLauncher.launch({ bin, args, cwd: o.cwd, env: o.env, maxStdout, timeoutMs: o.timeoutMs }, o.signal);
  if (o.signal.aborted) throw o.signal.reason ?? new AppError('cancelled');
  if (r.error) throw Object.assign(new Error(r.error.message), { code: r.error.code });
  const name = bin.slice(bin.lastIndexOf('/') + 1);
  if (r.timedOut) throw new AppError('timeout', { seconds: Math.round(o.timeoutMs! / 1000) }, undefined, `${name} ran past ${o.timeoutMs} ms`);
  if (r.code === 0 || r.capped) return { stdout: r.stdout, capped: r.capped, stderr: r.stderr };
  throw new Error(`${name} exited with ${r.code ?? r.signal}: ${r.stderr.split('\n').slice(-3).join(' | ')}`);
}
