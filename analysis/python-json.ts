// JSON as Python's json module writes it: besides standard JSON it emits the bare tokens NaN,
// Infinity and -Infinity (for a float('nan') cost, say), which JSON.parse rejects. They are read
// back as the JavaScript numbers they stand for; what a NaN means is decided by the caller.

const NAN_MARKER = '\u0000NaN';

/** JSON.parse, plus Python's NaN / Infinity / -Infinity outside strings. Throws SyntaxError like JSON.parse. */
export function parsePythonJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    // Only a text that holds one of Python's tokens is worth the second pass.
    if (!text.includes('NaN') && !text.includes('Infinity')) throw error;
    const rewritten = rewriteNonFiniteTokens(text);
    if (rewritten === text) throw error;
    return JSON.parse(rewritten, (_key, value: unknown) => (value === NAN_MARKER ? NaN : value));
  }
}

/**
 * Replaces NaN with a marker string and ±Infinity with ±1e999 (which JSON.parse reads as ±Infinity),
 * only outside string literals, so a prompt that mentions "NaN" is left alone.
 */
function rewriteNonFiniteTokens(text: string): string {
  const parts: string[] = [];
  let copiedUpTo = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 0x5c)
        i++; // backslash: skip the escaped character
      else if (ch === 0x22) inString = false;
      continue;
    }
    if (ch === 0x22) {
      inString = true;
      continue;
    }
    let token: string | undefined;
    let replacement = '';
    if (ch === 0x4e && text.startsWith('NaN', i)) [token, replacement] = ['NaN', JSON.stringify(NAN_MARKER)];
    else if (ch === 0x49 && text.startsWith('Infinity', i)) [token, replacement] = ['Infinity', '1e999'];
    if (token) {
      parts.push(text.slice(copiedUpTo, i), replacement);
      i += token.length - 1;
      copiedUpTo = i + 1;
    }
  }
  if (copiedUpTo === 0) return text;
  parts.push(text.slice(copiedUpTo));
  return parts.join('');
}
