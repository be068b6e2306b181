/** Mermaid source files (the preview draws them; see mermaid-view.tsx). */
export const isMermaidName = (name: string): boolean => /\.(mmd|mermaid)$/i.test(name);
