/** The tools as a provider sees them: name, description and a JSON Schema of the input (from the same zod schemas). */
import { z } from 'zod';
import type { ToolDef } from './providers/types';
import type { ToolSpec } from './tools';

export function toolDefs(tools: ToolSpec[]): ToolDef[] {
  return tools.map((s) => {
    const { $schema: _drop, ...schema } = z.toJSONSchema(s.schema) as Record<string, unknown>;
    return { name: s.name, description: s.description, input_schema: schema };
  });
}
