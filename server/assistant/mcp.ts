/**
 * The file tools as an MCP server (one per actor and request): the same
 * definitions and the same `Toolbox` the chat engine uses. External agents
 * reach it over the streamable HTTP transport (`/api/mcp`, keys with
 * `ai.use`); there the key's owner is the one acting, so changes apply as they
 * would through the HTTP API (no approval cards: the agent is the person's own
 * client), and every file content read is audited like the chat's.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Actor } from '../auth';
import { TOOLS, type Toolbox, type ToolOutcome } from './tools';
import { VERSION } from '../version';

function mcpServerFor(box: Toolbox, actor: Actor, onSent: (o: ToolOutcome) => void): McpServer {
  const server = new McpServer({ name: 'filedock-files', version: VERSION });
  for (const spec of TOOLS) {
    server.registerTool(spec.name, { description: spec.description, inputSchema: spec.schema.shape }, async (args: unknown) => {
      const parsed = box.parse(spec.name, args);
      const out = 'spec' in parsed ? await box.run(actor, parsed.spec, parsed.input) : parsed;
      if (out.sent) onSent(out);
      return { content: [{ type: 'text' as const, text: out.text }], ...(out.isError ? { isError: true } : {}) };
    });
  }
  return server;
}

/**
 * Answers one Streamable HTTP request with `body` (already read and parsed): a stateless server and
 * transport for this request alone, both closed when the response closes. Writes `res` itself.
 */
export async function answerMcp(
  box: Toolbox,
  actor: Actor,
  onSent: (o: ToolOutcome) => void,
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown,
): Promise<void> {
  const server = mcpServerFor(box, actor, onSent);
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, body);
}
