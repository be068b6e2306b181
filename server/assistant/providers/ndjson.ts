/** Splits a fetch body into lines (NDJSON), decoding UTF-8 across chunk edges. */
export async function* lines(body: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let rest = '';
  for await (const chunk of body) {
    rest += decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = rest.indexOf('\n')) >= 0) {
      const line = rest.slice(0, nl).trim();
      rest = rest.slice(nl + 1);
      if (line) yield line;
    }
  }
  rest += decoder.decode();
  if (rest.trim()) yield rest.trim();
}
