/** Coloured source text (the tokenizer's kinds map to CSS classes). */
import { memo } from 'react';
import { tokenize } from './highlight';

/** Colouring stops above this size so typing in a big file stays responsive. */
export const COLOUR_MAX = 200_000;

export const Code = memo(function Code({ text, name }: { text: string; name: string }) {
  if (text.length > COLOUR_MAX) return <>{text}</>;
  return (
    <>
      {tokenize(text, name).map((tk, i) =>
        tk.kind === 'plain' ? (
          tk.text
        ) : (
          <span key={i} className={`tk-${tk.kind}`}>
            {tk.text}
          </span>
        ),
      )}
    </>
  );
});
