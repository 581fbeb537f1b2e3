// The reference model's answering rule: pure, deterministic arithmetic whose accuracy on a problem
// set can be computed exactly from the data, so integration tests can assert scores to the digit.

const ACCURACY_PATTERN = /acc(\d+)/;

/**
 * The share of problems (0..100) a model name answers correctly: `reference-acc80` → 80.
 * A name without `acc<N>` is a perfect model (100).
 */
export function parseAccuracy(model: string): number {
  const match = ACCURACY_PATTERN.exec(model);
  if (match === null) return 100;
  const accuracy = Number(match[1]);
  if (!Number.isInteger(accuracy) || accuracy > 100) {
    throw new Error(`model "${model}": acc${match[1]}: expected an integer accuracy from 0 to 100, got ${match[1]}`);
  }
  return accuracy;
}

const FNV_OFFSET_BASIS = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
const utf8 = new TextEncoder();

/** Standard 32-bit FNV-1a over the UTF-8 bytes of `text`, as an unsigned integer. */
export function fnv1a32(text: string): number {
  let hash = FNV_OFFSET_BASIS;
  for (const byte of utf8.encode(text)) {
    hash ^= byte;
    hash = Math.imul(hash, FNV_PRIME);
  }
  return hash >>> 0;
}

type Operator = '+' | '-' | '*' | '/';

export interface ArithmeticExpression {
  left: bigint;
  operator: Operator;
  right: bigint;
  /** `"a op b"` with canonical integers and the ASCII operator: the key the accuracy hash is taken over. */
  normalized: string;
}

// `x` counts as multiplication only between spaces ("7 x 13"), so hex literals like 0x10 are not
// read as expressions; operands glued to letters or decimal points are not integers and are skipped.
const EXPRESSION_PATTERN = /(?<![\w.])(-?\d+)(?:\s*([+\-*×/])\s*|\s+(x)\s+)(-?\d+)(?!\w|\.\d)/u;

/** The first `<int> <op> <int>` in `text`, or undefined when there is none. */
export function findExpression(text: string): ArithmeticExpression | undefined {
  const match = EXPRESSION_PATTERN.exec(text);
  if (match === null) return undefined;
  const left = BigInt(match[1]!);
  const right = BigInt(match[4]!);
  const symbol = match[2] ?? match[3]!;
  const operator: Operator = symbol === '×' || symbol === 'x' ? '*' : (symbol as Operator);
  return { left, operator, right, normalized: `${left} ${operator} ${right}` };
}

/** The exact value of an expression; integer division truncates toward zero. */
export function evaluateExpression(expression: ArithmeticExpression): bigint | 'undefined' {
  const { left, operator, right } = expression;
  switch (operator) {
    case '+':
      return left + right;
    case '-':
      return left - right;
    case '*':
      return left * right;
    case '/':
      return right === 0n ? 'undefined' : left / right;
  }
}

/**
 * Whether a model name stands for a sampled model (`reference-acc50-sampled`): one that answers the same
 * question afresh each time it is asked, as a model sampled at a temperature above 0 does. Its draws are
 * still deterministic: the k-th asking of a question is draw k.
 */
export function isSampled(model: string): boolean {
  return model.includes('sampled');
}

/** Whether a model of this name answers this expression correctly (on draw `draw` of a sampled model). */
export function answersCorrectly(model: string, expression: ArithmeticExpression, draw = 0): boolean {
  const key = isSampled(model) ? `${expression.normalized}#${draw}` : expression.normalized;
  return fnv1a32(key) % 100 < parseAccuracy(model);
}

/**
 * The reference model's reply to a user message. It answers the first arithmetic expression, and
 * gets it right iff `fnv1a32(normalized expression) % 100 < N`; otherwise it replies `correct + 1`
 * (or `0` when the correct answer is "undefined", i.e. division by zero).
 */
export function referenceAnswer(model: string, userMessage: string, draw = 0): string {
  const expression = findExpression(userMessage);
  if (expression === undefined) return "I don't know.";
  const value = evaluateExpression(expression);
  if (answersCorrectly(model, expression, draw)) return `The answer is ${value}.`;
  const wrong = value === 'undefined' ? 0n : value + 1n;
  return `The answer is ${wrong}.`;
}

const WHITESPACE = /\s+/u;
const PUNCTUATION = /\p{P}/gu;

/**
 * A simple, deterministic token count: whitespace-separated words plus Unicode punctuation
 * characters (`\p{P}`). "The answer is 95." → 4 words + 1 period = 5. It only has to be stable,
 * not match any real tokenizer.
 */
export function countTokens(text: string): number {
  const words = text.split(WHITESPACE).filter((word) => word.length > 0).length;
  const punctuation = text.match(PUNCTUATION)?.length ?? 0;
  return words + punctuation;
}

const THINKING_PATTERN = /thinking(\d*)/;

/**
 * A reasoning model's answer: names with `thinking<N>` (`reference-thinking`, N = 8 by default) think N
 * words (`step`) inside `<think>…</think>` before the reference answer. Under a `max_tokens` the text is
 * cut to that many words and the answer ends for `length`: with N at or above it, inside the thinking.
 * `reasoningTokens` is N (or what was left of it), as a server reports `completion_tokens_details`.
 */
export function thinkingAnswer(
  model: string,
  answer: string,
  maxTokens: number | undefined,
): { text: string; reasoningTokens: number; finish: 'stop' | 'length' } | undefined {
  const match = THINKING_PATTERN.exec(model);
  if (!match) return undefined;
  const steps = Math.max(2, match[1] ? Number(match[1]) : 8);
  const words = ['<think>step', ...Array<string>(Math.max(steps - 2, 0)).fill('step'), 'step</think>', ...answer.split(WHITESPACE).filter(Boolean)];
  if (maxTokens === undefined || words.length <= maxTokens) return { text: words.join(' '), reasoningTokens: steps, finish: 'stop' };
  return { text: words.slice(0, maxTokens).join(' '), reasoningTokens: Math.min(steps, maxTokens), finish: 'length' };
}
